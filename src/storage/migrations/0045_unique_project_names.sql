-- Project names are unique within an organization (docs/operations.md).
-- Earlier versions accepted duplicates: all but the oldest project of a
-- name get their id appended, so the index can be built on any data.
UPDATE projects p
   SET name = p.name || ' (' || p.id || ')'
 WHERE EXISTS (
   SELECT 1 FROM projects q
    WHERE q.org_id = p.org_id AND q.name = p.name
      AND (q.creation_date, q.id) < (p.creation_date, p.id)
 );
CREATE UNIQUE INDEX projects_org_name ON projects (org_id, name);
