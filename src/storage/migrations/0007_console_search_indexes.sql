-- Indexes of the search calls (docs/api/search.md). Text matches compare
-- lower() values in the "C" collation: a btree in byte order answers a
-- prefix (LIKE 'abc%') as a range, and walks a page in sort order without a
-- sort step. Each index ends with the id, the tie-breaker of every order, so
-- paging is stable.
CREATE INDEX users_search_user_name ON users (org_id, (lower(user_name) COLLATE "C"), id);
CREATE INDEX users_search_email ON users (org_id, (lower(email) COLLATE "C"), id);
CREATE INDEX users_search_display_name ON users (org_id, (lower(display_name) COLLATE "C"), id);
CREATE INDEX users_search_state ON users (org_id, state, (lower(user_name) COLLATE "C"), id);
CREATE INDEX users_search_type ON users (org_id, type, (lower(user_name) COLLATE "C"), id);

CREATE INDEX orgs_search_name ON orgs ((lower(name) COLLATE "C"), id);
CREATE INDEX org_domains_search ON org_domains ((lower(domain) COLLATE "C"));
CREATE INDEX projects_search_name ON projects (org_id, (lower(name) COLLATE "C"), id);
CREATE INDEX apps_search_name ON apps (project_id, (lower(name) COLLATE "C"), id);

-- The event log is read newest or oldest first by position, filtered by type,
-- aggregate or creation date.
CREATE INDEX events_search_type ON events (event_type, position);
CREATE INDEX events_search_aggregate_id ON events (aggregate_id, position);
CREATE INDEX events_search_created_at ON events (created_at, position);
