//! The website (D19) over plain HTTP: what each page shows to whom, its headers, its
//! forms and their CSRF tokens. The real-browser tests are in `browser` and
//! `browser_back_office`, and the steps they share in `browser_steps`.

mod back_office;
mod browser;
mod browser_back_office;
mod browser_steps;
mod compare;
mod download_refused;
mod downloads;
mod member;
mod passwords;
mod public;
mod security;
mod try_it;
mod tushare_guide;

/// A visitor's pages of every kind, and an address that is none (its error page), for
/// the checks every page must pass.
const VISITOR_PAGES: [&str; 10] = [
    "/",
    "/indexes/Server_Index",
    "/calendar",
    "/methodology",
    "/plans",
    "/examples",
    "/tushare-guide",
    "/zh-CN/tushare-guide",
    "/login",
    "/no/such/page",
];
