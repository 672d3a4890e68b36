//! Quote imports in the back office: uploading a file (`POST /api/v1/admin/imports`), the
//! list and one import's detail. Building the files is [`crate::quotes`].

use crate::{Reply, Session, TestApp};

impl TestApp {
    /// `POST /api/v1/admin/imports` with `bytes` as the `file` field named `file_name`.
    pub async fn import_file(&self, session: &Session, file_name: &str, bytes: Vec<u8>) -> Reply {
        self.import_noted(session, file_name, bytes, None).await
    }

    /// `POST /api/v1/admin/imports` with the file and, when given, the field `note`
    /// before it (D26).
    pub async fn import_noted(
        &self,
        session: &Session,
        file_name: &str,
        bytes: Vec<u8>,
        note: Option<&str>,
    ) -> Reply {
        let part = reqwest::multipart::Part::bytes(bytes).file_name(file_name.to_string());
        let mut form = reqwest::multipart::Form::new();
        if let Some(note) = note {
            form = form.text("note", note.to_string());
        }
        let form = form.part("file", part);
        let response = self
            .http
            .post(format!("{}/api/v1/admin/imports", self.address))
            .header("Cookie", &session.cookie)
            .header("X-CSRF-Token", &session.csrf)
            .multipart(form)
            .send()
            .await
            .expect("upload");
        Self::reply(response).await
    }

    /// `GET /api/v1/admin/imports?{query}`.
    pub async fn imports(&self, session: &Session, query: &str) -> Reply {
        self.get_as(session, &Self::with_query("/api/v1/admin/imports", query))
            .await
    }

    /// `GET /api/v1/admin/imports/{id}`.
    pub async fn import_detail(&self, session: &Session, id: &str) -> Reply {
        self.get_as(session, &format!("/api/v1/admin/imports/{id}"))
            .await
    }
}
