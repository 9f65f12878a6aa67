-- An org's own texts of a message type in one language (docs/api/message-texts.md),
-- over the built-in ones: at most one row per org, type and language.
-- `texts` holds the fields the org set (title, preHeader, subject, greeting,
-- text, buttonText, footerText); a field it left out keeps the built-in text.
CREATE TABLE message_texts (
  org_id          text        NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  message_type    text        NOT NULL,
  language        text        NOT NULL,
  texts           jsonb       NOT NULL,
  sequence        bigint      NOT NULL,
  creation_date   timestamptz NOT NULL,
  change_date     timestamptz NOT NULL,
  PRIMARY KEY (org_id, message_type, language)
);
