//! An OTLP/HTTP receiver inside the test process: `POST /v1/traces` bodies are kept as
//! they arrive (undecoded, so it costs the exporting service nothing more than a real
//! collector on another host would). The trace test decodes them; the tracing bench
//! only counts them.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use actix_web::web::{self, Bytes};
use actix_web::{App, HttpResponse, HttpServer};

type Bodies = Arc<Mutex<Vec<Bytes>>>;

pub struct Receiver {
    port: u16,
    bodies: Bodies,
    handle: actix_web::dev::ServerHandle,
}

impl Receiver {
    /// Starts it on a free port, on the current actix runtime.
    pub fn start() -> Receiver {
        let bodies = Bodies::default();
        let store = web::Data::new(bodies.clone());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the OTLP receiver");
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(store.clone())
                .app_data(web::PayloadConfig::new(64 * 1024 * 1024))
                .route(
                    "/v1/traces",
                    web::post().to(|body: Bytes, store: web::Data<Bodies>| async move {
                        store.lock().unwrap().push(body);
                        HttpResponse::Ok()
                            .content_type("application/x-protobuf")
                            .finish()
                    }),
                )
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .expect("listen")
        .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Receiver {
            port,
            bodies,
            handle,
        }
    }

    /// The value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every export request's body so far, in arrival order.
    pub fn bodies(&self) -> Vec<Bytes> {
        self.bodies.lock().unwrap().clone()
    }

    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}
