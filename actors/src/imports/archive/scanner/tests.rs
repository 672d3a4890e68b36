//! The scanner counts what quick-xml would see, whole or fed a byte at a time.

use super::*;

fn tally(part: Part, xml: &str) -> Tally {
    let mut whole = Scanner::new(part);
    whole.feed(xml.as_bytes());
    // Fed a byte at a time, the scan finds the same: chunk edges do not matter.
    let mut bytewise = Scanner::new(part);
    for byte in xml.as_bytes() {
        bytewise.feed(std::slice::from_ref(byte));
    }
    assert_eq!(whole.tally, bytewise.tally, "{xml}");
    whole.tally
}

#[test]
fn shared_strings_are_counted_as_quick_xml_sees_them() {
    let xml = "<?xml version=\"1.0\"?>\n<sst xmlns=\"x\" count=\"9\" uniqueCount=\"3\">\
               <si><t>a &lt; b</t></si><x:si><t>b</t></x:si><si/>\
               <a-very-long-namespace-prefix:si/>\
               <!-- <si> --><![CDATA[<si>]]><sis/><s i=\"<si>\"/></sst>";
    let found = tally(Part::SharedStrings, xml);
    assert_eq!(found.sought, 4);
    assert_eq!(found.declared, 3);
    assert_eq!(found.elements, 9);
    assert!(!found.doctype);
}

#[test]
fn the_declared_count_is_read_as_calamine_reads_it() {
    let declared = |tag: &str| tally(Part::SharedStrings, tag).declared;
    assert_eq!(declared("<sst uniqueCount='99999999999'>"), 99_999_999_999);
    assert_eq!(declared("<x:sst a=\">\" uniqueCount = \"12\" >"), 12);
    // Saturating: a count past u64 is as large as any.
    assert_eq!(
        declared("<sst uniqueCount=\"99999999999999999999999\">"),
        u64::MAX
    );
    // Not all digits: calamine reserves nothing for it.
    assert_eq!(declared("<sst uniqueCount=\"+5\">"), 0);
    assert_eq!(declared("<sst uniqueCount=\"\">"), 0);
    assert_eq!(declared("<sst count=\"12\">"), 0);
    assert_eq!(declared("<si uniqueCount=\"12\">"), 0);
}

#[test]
fn style_values_and_elements() {
    let xml = "<styleSheet><fonts><font><name val=\"Calibri\"/></font></fonts>\
               <numFmts><numFmt formatCode='0.00&quot;x&quot;'/></numFmts></styleSheet>";
    let found = tally(Part::Styles, xml);
    assert_eq!(found.elements, 6);
    assert_eq!(found.sought, 0);
    assert_eq!(
        tally(Part::Styles, "<cellXfs><xf/><x:xf a='1'></x:xf></cellXfs>").sought,
        2
    );
    assert_eq!(found.longest_value, "0.00&quot;x&quot;".len() as u64);
}

#[test]
fn a_doctype_stops_the_scan() {
    assert!(tally(Part::Styles, "<!DOCTYPE x [<!ENTITY a \"b\">]><a/>").doctype);
    assert!(tally(Part::Styles, "<!-x-><a/>").doctype);
    assert!(!tally(Part::Styles, "<!----><a/>").doctype);
}
