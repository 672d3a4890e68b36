//! The website (D19) over plain HTTP: what each page shows to whom, its headers, its
//! forms and their CSRF tokens. The real-browser tests are in `browser`.

mod back_office;
mod browser;
mod browser_back_office;
mod member;
mod public;
mod security;
