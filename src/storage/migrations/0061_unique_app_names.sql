-- App names are unique within a project (docs/operations.md: every create
-- has a unique name). Earlier versions accepted duplicates: all but the
-- oldest app of a name get their id appended, so the index can be built on
-- any data.
UPDATE apps a
   SET name = a.name || ' (' || a.id || ')'
 WHERE EXISTS (
   SELECT 1 FROM apps b
    WHERE b.project_id = a.project_id AND b.name = a.name
      AND (b.creation_date, b.id) < (a.creation_date, a.id)
 );
CREATE UNIQUE INDEX apps_project_name ON apps (project_id, name);
