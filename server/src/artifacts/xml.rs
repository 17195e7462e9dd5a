//! A small element tree over quick-xml, enough to walk a UBL document by local names.
//!
//! UBL prefixes vary between senders (`cbc:`, `ubl:`, default namespaces), so elements are
//! addressed by local name only; the paths the reader uses are unambiguous within UBL.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::RenderError;

/// UBL nests at most a dozen levels; anything far deeper is hostile or broken, and the tree
/// is dropped recursively, so depth is bounded.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Default)]
pub struct Element {
    pub name: String,
    attributes: Vec<(String, String)>,
    text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The first child with this local name.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// All children with this local name.
    pub fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The first element along a `/`-separated path of local names.
    pub fn at(&self, path: &str) -> Option<&Element> {
        path.split('/').try_fold(self, |el, step| el.child(step))
    }

    /// All elements reached by a path (every match at every step).
    pub fn all<'a>(&'a self, path: &str) -> Vec<&'a Element> {
        let mut current = vec![self];
        for step in path.split('/') {
            current = current
                .into_iter()
                .flat_map(|el| el.children.iter().filter(|c| c.name == step))
                .collect();
        }
        current
    }

    /// The trimmed text at a path, if present and not blank.
    pub fn text_at(&self, path: &str) -> Option<String> {
        self.at(path).and_then(Element::value)
    }

    /// This element's trimmed text, if not blank.
    pub fn value(&self) -> Option<String> {
        let t = self.text.trim();
        (!t.is_empty()).then(|| t.to_string())
    }

    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }
}

/// Parses a whole document into its root element; well-formedness errors become
/// [`RenderError::Xml`] with the byte position.
pub fn parse(xml: &[u8]) -> Result<Element, RenderError> {
    let mut reader = Reader::from_reader(xml);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut buf = Vec::new();
    loop {
        let position = reader.buffer_position();
        let err = |e: &dyn std::fmt::Display| RenderError::Xml {
            position,
            message: e.to_string(),
        };
        let event = reader.read_event_into(&mut buf).map_err(|e| err(&e))?;
        match event {
            Event::Start(start) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(err(&format!("nesting deeper than {MAX_DEPTH} elements")));
                }
                stack.push(element(&start).map_err(|e| err(&e))?);
            }
            Event::Empty(start) => {
                let el = element(&start).map_err(|e| err(&e))?;
                attach(&mut stack, &mut root, el).map_err(|e| err(&e))?;
            }
            Event::End(_) => {
                let el = stack
                    .pop()
                    .ok_or_else(|| err(&"closing tag without an open element"))?;
                attach(&mut stack, &mut root, el).map_err(|e| err(&e))?;
            }
            Event::Text(text) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&text.unescape().map_err(|e| err(&e))?);
                } else if !text.iter().all(u8::is_ascii_whitespace) {
                    return Err(err(&"text outside the root element"));
                }
            }
            Event::CData(data) => {
                if let Some(top) = stack.last_mut() {
                    let data = data.decode().map_err(|e| err(&e))?;
                    top.text.push_str(&data);
                }
            }
            Event::Eof => break,
            // Comments, processing instructions, the declaration and DOCTYPE carry nothing
            // printed.
            _ => {}
        }
        buf.clear();
    }
    if !stack.is_empty() {
        return Err(RenderError::Xml {
            position: reader.buffer_position(),
            message: "unexpected end of document: unclosed elements".to_string(),
        });
    }
    root.ok_or_else(|| RenderError::Xml {
        position: 0,
        message: "no root element".to_string(),
    })
}

fn element(start: &BytesStart) -> Result<Element, quick_xml::Error> {
    let name = String::from_utf8_lossy(start.local_name().as_ref()).into_owned();
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(quick_xml::Error::from)?;
        let key = String::from_utf8_lossy(attribute.key.local_name().as_ref()).into_owned();
        attributes.push((key, attribute.unescape_value()?.into_owned()));
    }
    Ok(Element {
        name,
        attributes,
        ..Element::default()
    })
}

fn attach(
    stack: &mut [Element],
    root: &mut Option<Element>,
    el: Element,
) -> Result<(), &'static str> {
    match stack.last_mut() {
        Some(parent) => {
            parent.children.push(el);
            Ok(())
        }
        None if root.is_none() => {
            *root = Some(el);
            Ok(())
        }
        None => Err("more than one root element"),
    }
}
