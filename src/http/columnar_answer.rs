//! A query's page as an Arrow IPC stream or a Parquet file (D29), for callers whose
//! `Accept` names one ([`super::page_format`]): the page's rows as columns, encoded
//! from the database rows when the page was loaded for that format and cached in it
//! ([`iq_actors::dataset::Page::columnar`]), and its place in the headers CSV answers
//! carry (D18). Gzip (D16) is the encoding's own, kept with it, so a cache hit
//! compresses nothing. Refusals stay JSON envelopes.

use actix_web::HttpResponse;
use iq_actors::dataset::{Columnar, Page};
use iq_actors::ApiError;

use super::compress;
use super::csv_answer::with_place;
use super::envelope::BusinessCode;

/// The page in `format`, gzip-compressed when `gzip` (the request accepts it).
pub fn answer(page: &Page, format: Columnar, gzip: bool) -> Result<HttpResponse, ApiError> {
    let encoded = page.columnar(format)?;
    let mut builder = HttpResponse::Ok();
    builder.insert_header(("content-type", format.media_type()));
    with_place(&mut builder, page);
    let zipped = gzip && encoded.body.len() >= compress::MIN_SIZE;
    let mut response = builder.body(if zipped {
        encoded.gzipped()
    } else {
        encoded.body.clone()
    });
    if zipped {
        compress::mark_gzip(response.headers_mut());
    }
    response.extensions_mut().insert(BusinessCode(0));
    Ok(response)
}
