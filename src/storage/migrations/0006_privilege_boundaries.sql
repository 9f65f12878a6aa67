-- Which apps may obtain tokens for this service's own admin and management
-- API (scope urn:service:iam:api): only apps of the instance's first org
-- that an instance owner opted in (docs/security.md).
ALTER TABLE apps ADD COLUMN iam_api_access boolean NOT NULL DEFAULT false;

-- A write made with an impersonation token records both parties: the actor
-- as the event's creator and the user it acted for here.
ALTER TABLE events ADD COLUMN impersonated_user_id text;
