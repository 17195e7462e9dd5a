//! Writing XML as text: elements opened and closed in the order the caller gives (the
//! schema's order is the caller's business), every text and attribute value escaped.
//! A string builder rather than quick-xml's writer because the documents written are
//! small, flat and known in advance, and this keeps each writer a straight list of
//! elements.

use std::fmt::Write;

use quick_xml::escape::escape;

pub struct Xml(pub String);

impl Xml {
    pub fn with_capacity(bytes: usize) -> Self {
        Xml(String::with_capacity(bytes))
    }

    pub fn leaf(&mut self, name: &str, value: &str) {
        let _ = write!(self.0, "<{name}>{}</{name}>", escape(value));
    }

    pub fn leaf_attr(&mut self, name: &str, attr: &str, attr_value: &str, value: &str) {
        self.leaf_attrs(name, &[(attr, Some(attr_value))], value);
    }

    /// An element with the attributes that have a value.
    pub fn leaf_attrs(&mut self, name: &str, attrs: &[(&str, Option<&str>)], value: &str) {
        let _ = write!(self.0, "<{name}");
        for (attr, v) in attrs {
            if let Some(v) = v {
                let _ = write!(self.0, " {attr}=\"{}\"", escape(*v));
            }
        }
        let _ = write!(self.0, ">{}</{name}>", escape(value));
    }

    pub fn opt(&mut self, name: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.leaf(name, v);
        }
    }

    pub fn open(&mut self, name: &str) {
        let _ = write!(self.0, "<{name}>");
    }

    pub fn close(&mut self, name: &str) {
        let _ = write!(self.0, "</{name}>");
    }
}
