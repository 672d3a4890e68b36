//! The routes `src/routes/mod.rs` registers, read from its source (a route added there
//! and not in the document fails), and a test of that reader. It must never read the
//! OpenAPI document: `document.rs` compares the two.

/// The routes as the service registers them: the test reads the source, so a route
/// added there and not here fails.
const ROUTES: &str = include_str!("../../../src/routes/mod.rs");

/// Every `(METHOD, path)` of [`ROUTES`], `web::scope` prefixes included.
pub(super) fn registered_routes() -> Vec<(String, String)> {
    routes_in(ROUTES)
}

/// Every `.route("PATH", web::METHOD()...)` of `source`, with the prefixes of the
/// `web::scope("PREFIX")` chains it belongs to.
fn routes_in(source: &str) -> Vec<(String, String)> {
    let bytes = source.as_bytes();
    let at = |i: usize, token: &str| source[i..].starts_with(token);
    let literal = |from: usize| -> (String, usize) {
        let start = from + source[from..].find('"').expect("a string literal") + 1;
        let end = start + source[start..].find('"').expect("its end");
        (source[start..end].to_string(), end + 1)
    };
    let mut routes = Vec::new();
    // Open scopes: the depth of parentheses they were opened at, and their prefix.
    let mut scopes: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut handlers = 0;
    let mut i = 0;
    while i < bytes.len() {
        if at(i, "//") {
            i += source[i..].find('\n').unwrap_or(source.len() - i);
            continue;
        }
        if bytes[i] == b'"' {
            i += 1 + source[i + 1..].find('"').expect("string end") + 1;
            continue;
        }
        if at(i, "web::scope(") {
            let (prefix, _) = literal(i);
            scopes.push((depth, prefix));
            i += "web::scope".len();
            continue;
        }
        if at(i, ".route(") {
            let (path, after) = literal(i);
            let rest = source[after..].trim_start();
            let rest = rest
                .strip_prefix(',')
                .expect("`,` after the path")
                .trim_start();
            let rest = rest.strip_prefix("web::").expect("`web::METHOD()`");
            let method = &rest[..rest.find('(').expect("`(`")];
            let prefix: String = scopes.iter().map(|(_, p)| p.as_str()).collect();
            routes.push((method.to_uppercase(), format!("{prefix}{path}")));
            i += ".route".len();
            continue;
        }
        if at(i, ".to(") {
            handlers += 1;
        }
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                while scopes.last().is_some_and(|(d, _)| *d > depth) {
                    scopes.pop();
                }
            }
            _ => {}
        }
        i += 1;
    }
    // Every handler was found: another way of registering one would go unseen.
    assert_eq!(
        routes.len(),
        handlers,
        "a route is registered in a way this test cannot read: {routes:?}"
    );
    routes
}

#[test]
fn the_route_reader_follows_scopes_and_wrapped_lines() {
    let source = r#"
        cfg.route("/a", web::get().to(a)); // .route("/commented", web::get().to(x))
        cfg.service(
            web::scope("/v1")
                .route("/b/{id}", web::patch().to(b))
                .service(web::scope("/inner").route("/c", web::post().to(c)))
                .route(
                    "/d",
                    web::delete().to(d),
                ),
        );
        cfg.route("/e", web::put().to(e));
    "#;
    let routes: Vec<(&str, &str)> = vec![
        ("GET", "/a"),
        ("PATCH", "/v1/b/{id}"),
        ("POST", "/v1/inner/c"),
        ("DELETE", "/v1/d"),
        ("PUT", "/e"),
    ];
    let found = routes_in(source);
    let found: Vec<(&str, &str)> = found
        .iter()
        .map(|(m, p)| (m.as_str(), p.as_str()))
        .collect();
    assert_eq!(found, routes);
}
