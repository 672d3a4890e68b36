//! Gzip answers assembled from pieces compressed apart (D16: a cached page keeps its
//! compressed form). A cached page is compressed once, as deflate blocks that end on a
//! byte boundary and are not final ([`Deflated::piece`]); each answer then compresses
//! only its own few bytes around it (the envelope with its `request_id`) and splices
//! the three into one gzip member ([`splice`]), the CRC combined from the pieces'.
//!
//! This is valid deflate: a piece compressed from an empty window refers only to its
//! own bytes, and a sync flush ends it with an empty stored block on a byte boundary,
//! so any blocks may follow. Must never compress a piece with a preset dictionary or
//! end one with a final block.

use std::io::Write;

use crc32fast::Hasher;
use flate2::write::DeflateEncoder;
use flate2::Compression;

/// The fixed gzip header: deflate, no name or time, unknown OS.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Bytes compressed into deflate blocks that other blocks may follow.
#[derive(Clone)]
pub struct Deflated {
    blocks: Vec<u8>,
    /// The CRC-32 of the bytes and their length.
    crc: Hasher,
}

impl std::fmt::Debug for Deflated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deflated")
            .field("blocks", &self.blocks.len())
            .field("len", &self.crc.total_len())
            .finish()
    }
}

impl Deflated {
    /// `data` compressed at the default level: done once per cached page.
    pub fn piece(data: &[u8]) -> Deflated {
        Deflated::at(data, Compression::default(), false)
    }

    fn at(data: &[u8], level: Compression, last: bool) -> Deflated {
        let mut encoder = DeflateEncoder::new(Vec::with_capacity(data.len() / 3 + 64), level);
        // Writing to a Vec cannot fail.
        let _ = encoder.write_all(data);
        let blocks = if last {
            encoder.finish().unwrap_or_default()
        } else {
            // A sync flush: everything out, ending on a byte boundary, not final.
            let _ = encoder.flush();
            std::mem::take(encoder.get_mut())
        };
        let mut crc = Hasher::new();
        crc.update(data);
        Deflated { blocks, crc }
    }

    /// The compressed size.
    pub fn compressed_len(&self) -> usize {
        self.blocks.len()
    }
}

/// `data` as one gzip member, at the fastest level: for answers that are not cached
/// and so are compressed once anyway.
pub fn whole(data: &[u8]) -> Vec<u8> {
    splice(&[], &Deflated::at(data, Compression::fast(), false), &[])
}

/// One gzip member holding `before`, the bytes of `middle`, then `after`. Only `before`
/// and `after` are compressed here, at the fastest level: they are a few bytes.
pub fn splice(before: &[u8], middle: &Deflated, after: &[u8]) -> Vec<u8> {
    let head = Deflated::at(before, Compression::fast(), false);
    let tail = Deflated::at(after, Compression::fast(), true);
    let mut crc = head.crc.clone();
    crc.combine(&middle.crc);
    crc.combine(&tail.crc);
    let len = crc.total_len();
    let mut out = Vec::with_capacity(
        HEADER.len() + head.blocks.len() + middle.blocks.len() + tail.blocks.len() + 8,
    );
    out.extend_from_slice(&HEADER);
    out.extend_from_slice(&head.blocks);
    out.extend_from_slice(&middle.blocks);
    out.extend_from_slice(&tail.blocks);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    // ISIZE is the length modulo 2^32 (RFC 1952).
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use flate2::read::GzDecoder;
    use proptest::prelude::*;

    use super::*;

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .expect("valid gzip");
        out
    }

    #[test]
    fn a_page_spliced_into_an_envelope_reads_back_whole() {
        let page = br#"{"fields":["a"],"items":[["1.00"],["1.00"],["1.00"]]}"#.repeat(50);
        let piece = Deflated::piece(&page);
        assert!(piece.compressed_len() < page.len() / 4, "it compresses");
        let before = br#"{"request_id":"req_0123","code":0,"message":"ok","data":"#;
        let gz = splice(before, &piece, b"}");
        let mut expected = before.to_vec();
        expected.extend_from_slice(&page);
        expected.push(b'}');
        assert_eq!(gunzip(&gz), expected);
        // The same piece serves another envelope.
        let other = splice(b"[", &piece, b"]");
        assert_eq!(gunzip(&other).len(), page.len() + 2);
        assert_eq!(gunzip(&whole(&page)), page);
    }

    proptest! {
        #[test]
        fn any_three_pieces_read_back_in_order(
            before in proptest::collection::vec(any::<u8>(), 0..300),
            middle in proptest::collection::vec(any::<u8>(), 0..5000),
            after in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let gz = splice(&before, &Deflated::piece(&middle), &after);
            let mut expected = before.clone();
            expected.extend_from_slice(&middle);
            expected.extend_from_slice(&after);
            prop_assert_eq!(gunzip(&gz), expected);
        }
    }
}
