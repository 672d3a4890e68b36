//! An OTLP/HTTP receiver inside the test process: `POST /v1/traces` bodies are kept
//! with their `Content-Encoding` (undecoded protobuf, so it costs the exporting service
//! nothing more than a real collector on another host would). The trace tests
//! decode them; the tracing bench only counts them. [`Receiver::start_tls`] serves
//! HTTPS with a self-signed certificate made for the test, as a managed collector would
//! (with a certificate of a public CA).

use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};

/// One export request: its body, decoded (actix-web undoes a `Content-Encoding` it
/// knows before the handler sees the body), and the encoding it was sent with, if any.
#[derive(Clone)]
pub struct Export {
    pub encoding: Option<String>,
    pub body: Bytes,
}

type Exports = Arc<Mutex<Vec<Export>>>;

pub struct Receiver {
    scheme: &'static str,
    port: u16,
    exports: Exports,
    handle: actix_web::dev::ServerHandle,
    /// The CA certificate (PEM) a client must trust, for HTTPS.
    pub certificate: Option<String>,
}

impl Receiver {
    /// Starts a plain HTTP receiver on a free port, on the current actix runtime.
    pub fn start() -> Receiver {
        Self::serve(None)
    }

    /// Starts an HTTPS receiver for `localhost` whose certificate is made now, signed by
    /// itself: only a client told to trust [`Receiver::certificate`] can reach it.
    pub fn start_tls() -> Receiver {
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
                .expect("a self-signed certificate");
        iq_service::tls::install_crypto();
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(signing_key.serialize_der().into()),
            )
            .expect("a TLS configuration");
        let mut receiver = Self::serve(Some(config));
        receiver.certificate = Some(cert.pem());
        receiver
    }

    fn serve(tls: Option<rustls::ServerConfig>) -> Receiver {
        let exports = Exports::default();
        let store = web::Data::new(exports.clone());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the OTLP receiver");
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(store.clone())
                .app_data(web::PayloadConfig::new(64 * 1024 * 1024))
                .route(
                    "/v1/traces",
                    web::post().to(
                        |request: HttpRequest, body: Bytes, store: web::Data<Exports>| async move {
                            let encoding = request
                                .headers()
                                .get("content-encoding")
                                .and_then(|v| v.to_str().ok())
                                .map(str::to_string);
                            store.lock().unwrap().push(Export { encoding, body });
                            HttpResponse::Ok()
                                .content_type("application/x-protobuf")
                                .finish()
                        },
                    ),
                )
        })
        .workers(1)
        .disable_signals();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let server = match tls {
            Some(config) => server.listen_rustls_0_23(listener, config),
            None => server.listen(listener),
        }
        .expect("listen")
        .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Receiver {
            scheme,
            port,
            exports,
            handle,
            certificate: None,
        }
    }

    /// The value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        // The certificate names `localhost`, not the address.
        let host = if self.scheme == "https" {
            "localhost"
        } else {
            "127.0.0.1"
        };
        format!("{}://{host}:{}", self.scheme, self.port)
    }

    /// Every export request so far, in arrival order.
    pub fn exports(&self) -> Vec<Export> {
        self.exports.lock().unwrap().clone()
    }

    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}
