//! Hostile workbooks and CSV files, built in the test (never committed): a few KB that
//! declare or expand to gigabytes. Each must be refused with the limit it breaks, without
//! allocating what it declares.

use super::template::template_xlsx;
use super::{extract, Limits, TabularError};
use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
};
use std::io::Read;

/// One archive member as written: raw (already compressed) data, and the sizes the
/// headers declare, which a hostile archive may get wrong on purpose.
pub struct Entry {
    pub name: String,
    /// 0 stored, 8 deflated.
    pub method: u16,
    pub data: Vec<u8>,
    pub crc: u32,
    pub declared_size: u32,
}

impl Entry {
    pub fn deflated(name: &str, content: &[u8]) -> Entry {
        Entry {
            name: name.into(),
            method: 8,
            data: miniz_oxide::deflate::compress_to_vec(content, 6),
            crc: crc32fast::hash(content),
            declared_size: content.len() as u32,
        }
    }
}

/// A ZIP written by hand, so that sizes and compressed data can be anything.
pub fn zip_of(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let header = |sig: u32, central_dir: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central_dir {
                h.extend(20u16.to_le_bytes()); // made by
            }
            h.extend(20u16.to_le_bytes()); // needed
            h.extend(0u16.to_le_bytes()); // flags
            h.extend(e.method.to_le_bytes());
            h.extend(0u16.to_le_bytes()); // time
            h.extend(0x21u16.to_le_bytes()); // date: 1980-01-01
            h.extend(e.crc.to_le_bytes());
            h.extend((e.data.len() as u32).to_le_bytes());
            h.extend(e.declared_size.to_le_bytes());
            h.extend((e.name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes()); // extra
            if central_dir {
                h.extend(0u16.to_le_bytes()); // comment
                h.extend(0u16.to_le_bytes()); // disk
                h.extend(0u16.to_le_bytes()); // internal attributes
                h.extend(0u32.to_le_bytes()); // external attributes
                h.extend(offset.to_le_bytes());
            }
            h.extend(e.name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend(&e.data);
        central.extend(header(0x0201_4b50, true));
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]); // disk numbers
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// The entries of the server's own xlsx template (a valid one-invoice workbook).
pub fn template_entries() -> Vec<(String, Vec<u8>)> {
    let bytes = template_xlsx().expect("template");
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).expect("entry");
            let mut content = Vec::new();
            f.read_to_end(&mut content).expect("read");
            (f.name().expect("name").to_string(), content)
        })
        .collect()
}

/// The template with `change` applied to its entries (name → content), plus `extra`.
pub fn template_with(
    change: impl Fn(&str, Vec<u8>) -> Vec<u8>,
    extra: impl IntoIterator<Item = Entry>,
) -> Vec<u8> {
    let mut entries: Vec<Entry> = template_entries()
        .into_iter()
        .map(|(name, content)| {
            let content = change(&name, content);
            Entry::deflated(&name, &content)
        })
        .collect();
    entries.extend(extra);
    zip_of(&entries)
}

/// Replace `from` by `to` in an XML part.
pub fn replace(content: Vec<u8>, from: &str, to: &str) -> Vec<u8> {
    let text = String::from_utf8(content).expect("utf8");
    assert!(text.contains(from), "`{from}` not in part");
    text.replacen(from, to, 1).into_bytes()
}

pub const SHEET: &str = "xl/worksheets/sheet1.xml";
pub const STRINGS: &str = "xl/sharedStrings.xml";

/// The first sheet declares the whole grid A1:XFD1048576 as its dimension.
pub fn dimension_everything() -> Vec<u8> {
    template_with(
        |name, content| {
            if name != SHEET {
                return content;
            }
            let text = String::from_utf8(content).expect("utf8");
            let start = text.find("<dimension ref=\"").expect("dimension") + 16;
            let end = start + text[start..].find('"').expect("end");
            format!("{}A1:XFD1048576{}", &text[..start], &text[end..]).into_bytes()
        },
        [],
    )
}

/// One more cell in the last cell of the grid, XFD1048576.
pub fn cell_at_the_end() -> Vec<u8> {
    template_with(
        |name, content| {
            if name != SHEET {
                return content;
            }
            replace(
                content,
                "</sheetData>",
                "<row r=\"1048576\"><c r=\"XFD1048576\"><v>1</v></c></row></sheetData>",
            )
        },
        [],
    )
}

/// The shared-strings table declares 10^14 strings.
pub fn unique_count_huge() -> Vec<u8> {
    template_with(
        |name, content| {
            if name != STRINGS {
                return content;
            }
            let text = String::from_utf8(content).expect("utf8");
            let start = text.find("uniqueCount=\"").expect("uniqueCount") + 13;
            let end = start + text[start..].find('"').expect("end");
            format!("{}100000000000000{}", &text[..start], &text[end..]).into_bytes()
        },
        [],
    )
}

/// Raw deflate of `chunk` repeated `times` times, without compressing it `times` times: a
/// chunk compressed from an empty history and ended with a sync flush decodes to the
/// same bytes wherever it is replayed. Returns (data, crc, size).
pub fn deflate_repeated(chunk: &[u8], times: usize) -> (Vec<u8>, u32, u64) {
    let mut c = CompressorOxide::new(create_comp_flags_from_zip_params(6, -15, 0));
    let mut block = vec![0u8; chunk.len() + 1024];
    let (status, used, written) = compress(&mut c, chunk, &mut block, TDEFLFlush::Sync);
    assert_eq!((status, used), (TDEFLStatus::Okay, chunk.len()));
    block.truncate(written);
    let mut data = Vec::with_capacity(block.len() * times + 2);
    let mut crc = crc32fast::Hasher::new();
    let one = {
        let mut h = crc32fast::Hasher::new();
        h.update(chunk);
        h
    };
    for _ in 0..times {
        data.extend(&block);
        crc.combine(&one);
    }
    // An empty final block with fixed codes.
    data.extend([0x03, 0x00]);
    (data, crc.finalize(), chunk.len() as u64 * times as u64)
}

/// A shared-strings part of about 1 GiB (60 million one-letter strings) in ~2 MB.
pub fn deflate_bomb() -> Vec<u8> {
    let chunk = "<si><t>a</t></si>".repeat(60_000);
    let (data, crc, size) = deflate_repeated(chunk.as_bytes(), 1_000);
    let head = br#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">"#;
    // The part is the head (stored in its own deflate block), the bomb, then the end.
    let mut c = CompressorOxide::new(create_comp_flags_from_zip_params(6, -15, 0));
    let mut first = vec![0u8; head.len() + 1024];
    let (_, _, n) = compress(&mut c, head, &mut first, TDEFLFlush::Sync);
    first.truncate(n);
    let mut tail_c = CompressorOxide::new(create_comp_flags_from_zip_params(6, -15, 0));
    let tail = b"</sst>";
    let mut last = vec![0u8; 1024];
    let (_, _, n) = compress(&mut tail_c, tail, &mut last, TDEFLFlush::Finish);
    last.truncate(n);
    let mut all = first;
    all.extend(&data[..data.len() - 2]);
    all.extend(last);
    let mut h = crc32fast::Hasher::new();
    h.update(head);
    let mut hc = crc32fast::Hasher::new_with_initial_len(crc, size);
    hc.update(tail);
    h.combine(&hc);
    let total = head.len() as u64 + size + tail.len() as u64;
    let bomb = Entry {
        name: STRINGS.into(),
        method: 8,
        data: all,
        crc: h.finalize(),
        declared_size: u32::try_from(total).unwrap_or(u32::MAX),
    };
    let mut entries: Vec<Entry> = template_entries()
        .into_iter()
        .filter(|(name, _)| name != STRINGS)
        .map(|(name, content)| Entry::deflated(&name, &content))
        .collect();
    entries.push(bomb);
    zip_of(&entries)
}

/// The template and 10,000 empty members.
pub fn many_entries() -> Vec<u8> {
    template_with(
        |_, c| c,
        (0..10_000).map(|i| Entry::deflated(&format!("xl/media/empty{i}.bin"), b"")),
    )
}

/// A CSV of `n` one-line invoices (the generic template's columns).
pub fn many_invoices_csv(n: usize) -> Vec<u8> {
    let mut out = String::from(
        "Invoice number,Issue date,Seller name,Seller VAT ID,Buyer name,Item name,Quantity,Unit price,VAT rate\n",
    );
    for i in 0..n {
        out.push_str(&format!(
            "INV-{i},2027-01-15,Dodávateľ s.r.o.,SK2022749619,Odberateľ a.s.,Goods,1,10.00,23\n"
        ));
    }
    out.into_bytes()
}

fn run(bytes: &[u8]) -> Result<usize, TabularError> {
    extract(bytes, None, None, &Limits::default()).map(|x| x.invoices.len())
}

/// The limit named by a refusal.
fn limit_of(result: Result<usize, TabularError>) -> (&'static str, u64) {
    match result {
        Err(TabularError::Limit { limit, value, .. }) => (limit, value),
        other => panic!("expected a limit refusal, got {other:?}"),
    }
}

#[test]
fn a_declared_dimension_of_the_whole_grid_allocates_nothing() {
    // The dimension is only a claim; the cells decide. The template still converts.
    assert_eq!(run(&dimension_everything()).unwrap(), 1);
}

#[test]
fn a_cell_at_xfd1048576_is_refused_by_the_column_limit() {
    let limits = Limits::default();
    assert_eq!(
        limit_of(run(&cell_at_the_end())),
        ("max_columns", limits.max_columns as u64)
    );
}

#[test]
fn a_huge_shared_string_count_is_refused_before_the_reader_sees_it() {
    let limits = Limits::default();
    assert_eq!(
        limit_of(run(&unique_count_huge())),
        ("max_shared_strings", limits.max_shared_strings)
    );
}

#[test]
fn a_deflate_bomb_is_refused_by_its_compression_ratio() {
    let bomb = deflate_bomb();
    assert!(bomb.len() < 3_000_000, "{}", bomb.len());
    let limits = Limits::default();
    assert_eq!(
        limit_of(run(&bomb)),
        ("max_compression_ratio", limits.max_compression_ratio)
    );
}

/// The template plus a member of 300 MiB of spaces in ~300 KB, declaring `declared`.
fn with_padding(declared: u32) -> Vec<u8> {
    let mut entries: Vec<Entry> = template_entries()
        .into_iter()
        .map(|(name, content)| Entry::deflated(&name, &content))
        .collect();
    let (data, crc, _) = deflate_repeated(&[b' '; 1 << 20], 300);
    entries.push(Entry {
        name: "xl/media/padding.xml".into(),
        method: 8,
        data,
        crc,
        declared_size: declared,
    });
    zip_of(&entries)
}

#[test]
fn declared_sizes_bound_what_is_decompressed() {
    // With the ratio out of the way, a member beyond the byte limit is refused unread.
    let limits = Limits {
        max_compression_ratio: 1_000_000,
        ..Limits::default()
    };
    let honest = extract(&with_padding(300 << 20), None, None, &limits);
    assert_eq!(
        limit_of(honest.map(|x| x.invoices.len())),
        ("max_unpacked_bytes", limits.max_unpacked_bytes)
    );
    // A member that declares 1 KiB but holds more is not read past its claim (the zip
    // reader fails it there; the inspection's meter would stop it at the limits anyway).
    match extract(&with_padding(1024), None, None, &limits) {
        Err(TabularError::Workbook { reason, .. }) => {
            assert!(reason.contains("declared"), "{reason}")
        }
        other => panic!("expected a damaged workbook, got {other:?}"),
    }
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the overflow panics only where overflow checks are on"
)]
fn a_reader_panic_on_a_malformed_cell_reference_is_an_error() {
    // Found by the xlsx fuzz target: a column of many letters overflows calamine's
    // cell-reference arithmetic (a panic where overflow checks are on).
    let overflow = template_with(
        |name, content| {
            if name != SHEET {
                return content;
            }
            replace(
                content,
                "</sheetData>",
                "<row r=\"9\"><c r=\"ZZZZZZZZZZZZZZ9\"><v>1</v></c></row></sheetData>",
            )
        },
        [],
    );
    // Unguarded, the reader panics (what the server did before the guard)...
    let limits = Limits::default();
    let unguarded = std::panic::catch_unwind(|| super::read(&overflow, None, None, &limits));
    assert!(
        unguarded.is_err(),
        "the input no longer triggers the reader's panic"
    );
    // ...guarded, the upload is refused as damaged.
    assert!(matches!(run(&overflow), Err(TabularError::Workbook { .. })));
}

#[test]
fn too_many_archive_members_are_refused() {
    let limits = Limits::default();
    assert_eq!(
        limit_of(run(&many_entries())),
        ("max_zip_entries", limits.max_zip_entries as u64)
    );
}

#[test]
fn the_invoice_limit_stops_the_reading_of_a_large_csv() {
    let csv = many_invoices_csv(90_000);
    match run(&csv) {
        Err(TabularError::TooManyInvoices { limit }) => assert_eq!(limit, 500),
        other => panic!("expected the invoice limit, got {other:?}"),
    }
    // At the limit it converts.
    assert_eq!(run(&many_invoices_csv(500)).unwrap(), 500);
}
