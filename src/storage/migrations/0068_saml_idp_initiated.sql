-- IdP-initiated SAML sign-in (docs/saml.md): an unsolicited Response is
-- sent only to apps that opted in, since such a response answers no request
-- of the SP and so carries no InResponseTo to bind it to the browser.
ALTER TABLE saml_apps ADD COLUMN allow_idp_initiated boolean NOT NULL DEFAULT false;
