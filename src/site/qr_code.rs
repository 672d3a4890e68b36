//! A QR code drawn on the server as inline SVG (issue 51: the two-factor set-up shows
//! its `otpauth://` link as one, beside the key and the link): black squares on white,
//! no script, no image request, nothing for the page's CSP to allow.
//!
//! It draws only what it is given; it must never be given anything but a link the page
//! already shows in text.

use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};

/// The SVG element of `text`'s QR code, labelled `label` for screen readers; `None`
/// when the text is too long for a QR code.
pub fn svg_of(text: &str, label: &str) -> Option<String> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M).ok()?;
    let image = code
        .render::<svg::Color>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build();
    // The renderer writes an XML document; the page wants the element alone.
    let element = &image[image.find("<svg")?..];
    let label = label.replace(['"', '<', '>', '&'], "");
    Some(element.replacen(
        "<svg ",
        &format!(r#"<svg role="img" aria-label="{label}" "#),
        1,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_becomes_one_labelled_svg_element() {
        let svg = svg_of(
            "otpauth://totp/AI%20Hardware:tom?secret=JBSWY3DPEHPK3PXP",
            "QR",
        )
        .expect("a QR code");
        assert!(
            svg.starts_with(r#"<svg role="img" aria-label="QR" "#),
            "{svg}"
        );
        assert!(svg.ends_with("</svg>"));
        assert!(!svg.contains("<?xml") && !svg.contains("<script"));
        assert!(svg_of(&"x".repeat(5000), "QR").is_none());
    }
}
