//! Reading one XSD file into a raw model: its declarations as written, with every QName
//! resolved to a (namespace, local name) pair. Compiling them is `compile.rs`'s job.
//!
//! The file is parsed with the engine's own XML parser (`Document`). That parser does not
//! expose namespace declarations, which QName-valued attributes (`type="cbc:IDType"`)
//! need, so they are read from the start tags with quick-xml; the UBL files declare every
//! prefix on `xsd:schema`, and a declaration anywhere else is refused rather than
//! misread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quick_xml::events::Event;

use super::SchemaError;
use crate::document::{Document, NodeId, NodeKind};

pub(crate) const XSD_NS: &str = "http://www.w3.org/2001/XMLSchema";

/// An expanded name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Name {
    pub ns: String,
    pub local: String,
}

/// `maxOccurs="unbounded"`.
pub(crate) const UNBOUNDED: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) enum Term {
    /// `<xsd:element ref="..."/>`: a global element.
    Ref(Name),
    /// A local element declaration with a named type.
    Local { name: Name, type_name: Name },
    /// `<xsd:any namespace="##other"/>`, owned by a schema with this target namespace.
    AnyOther { target: String },
}

#[derive(Clone, Debug)]
pub(crate) struct Particle {
    pub term: Term,
    pub min: u32,
    pub max: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct RawAttribute {
    pub name: String,
    pub type_name: Name,
    pub required: bool,
    pub prohibited: bool,
}

#[derive(Clone, Debug)]
pub(crate) enum Content {
    /// No content model: attributes only.
    Empty,
    /// `xsd:sequence` of element particles.
    Sequence(Vec<Particle>),
    /// `xsd:simpleContent` derived from `base`.
    /// (Extension and restriction differ only in facets, which UBL does not use and the
    /// reader refuses.)
    Simple { base: Name },
}

#[derive(Clone, Debug)]
pub(crate) struct RawType {
    pub content: Content,
    pub attributes: Vec<RawAttribute>,
}

#[derive(Clone, Debug)]
pub(crate) struct RawElement {
    pub name: Name,
    pub type_name: Name,
}

/// One XSD file.
#[derive(Debug, Default)]
pub(crate) struct RawSchema {
    pub target: String,
    /// `xsd:import`: namespace → file.
    pub imports: Vec<(String, PathBuf)>,
    /// `xsd:include`.
    pub includes: Vec<PathBuf>,
    pub elements: Vec<RawElement>,
    pub types: Vec<(Name, RawType)>,
}

/// Prefix → URI of the declarations on the root start tag; refuses declarations elsewhere.
fn root_namespaces(path: &Path, bytes: &[u8]) -> Result<HashMap<String, String>, SchemaError> {
    let mut reader = quick_xml::Reader::from_reader(bytes);
    let mut map = HashMap::new();
    let mut seen_root = false;
    let mut buf = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| SchemaError::Xml {
                file: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let start = match &event {
            Event::Start(s) | Event::Empty(s) => s,
            Event::Eof => break,
            _ => {
                buf.clear();
                continue;
            }
        };
        for a in start.attributes().flatten() {
            let key = a.key.as_ref();
            let prefix = if key == b"xmlns" {
                Some("")
            } else {
                key.strip_prefix(b"xmlns:")
                    .and_then(|p| std::str::from_utf8(p).ok())
            };
            let Some(prefix) = prefix else { continue };
            if seen_root {
                return Err(SchemaError::Unsupported {
                    file: path.to_path_buf(),
                    what: "namespace declarations below xsd:schema".into(),
                });
            }
            let value = a.unescape_value().map_err(|e| SchemaError::Xml {
                file: path.to_path_buf(),
                message: e.to_string(),
            })?;
            map.insert(prefix.to_string(), value.into_owned());
        }
        seen_root = true;
        buf.clear();
    }
    Ok(map)
}

struct Reader<'a> {
    doc: &'a Document,
    file: &'a Path,
    prefixes: HashMap<String, String>,
}

impl Reader<'_> {
    fn unsupported(&self, what: impl Into<String>) -> SchemaError {
        SchemaError::Unsupported {
            file: self.file.to_path_buf(),
            what: what.into(),
        }
    }

    fn attr(&self, el: NodeId, local: &str) -> Option<&str> {
        let id = self.doc.lookup_name("", local)?;
        self.doc.attribute(el, id).map(|a| self.doc.text(a))
    }

    fn required_attr(&self, el: NodeId, local: &str) -> Result<&str, SchemaError> {
        self.attr(el, local).ok_or_else(|| SchemaError::Invalid {
            file: self.file.to_path_buf(),
            message: format!(
                "xsd:{} without the attribute {local}",
                self.xsd_local(el).unwrap_or("?")
            ),
        })
    }

    /// The local name of an element in the XML Schema namespace (None: another element).
    fn xsd_local(&self, el: NodeId) -> Option<&str> {
        let q = self.doc.qname(self.doc.element_name(el)?);
        (q.namespace == XSD_NS).then_some(q.local.as_str())
    }

    /// Child elements in the XSD namespace, annotations left out; anything else is refused.
    fn xsd_children(&self, el: NodeId) -> Result<Vec<(NodeId, &str)>, SchemaError> {
        let mut out = Vec::new();
        for c in self.doc.children(el) {
            if self.doc.kind(c) != NodeKind::Element {
                continue;
            }
            match self.xsd_local(c) {
                Some("annotation") => {}
                Some(local) => out.push((c, local)),
                None => return Err(self.unsupported("a foreign element inside a declaration")),
            }
        }
        Ok(out)
    }

    fn resolve(&self, qname: &str) -> Result<Name, SchemaError> {
        let (prefix, local) = qname.split_once(':').unwrap_or(("", qname));
        let ns = self
            .prefixes
            .get(prefix)
            .ok_or_else(|| SchemaError::Invalid {
                file: self.file.to_path_buf(),
                message: format!("the prefix of `{qname}` is not declared"),
            })?;
        Ok(Name {
            ns: ns.clone(),
            local: local.to_string(),
        })
    }

    fn occurs(&self, el: NodeId) -> Result<(u32, u32), SchemaError> {
        let number = |v: &str| {
            v.trim().parse::<u32>().map_err(|_| SchemaError::Invalid {
                file: self.file.to_path_buf(),
                message: format!("bad occurrence count `{v}`"),
            })
        };
        let min = self.attr(el, "minOccurs").map_or(Ok(1), number)?;
        let max = match self.attr(el, "maxOccurs") {
            None => 1,
            Some("unbounded") => UNBOUNDED,
            Some(v) => number(v)?,
        };
        if max < min || max == 0 {
            return Err(self.unsupported(format!("minOccurs {min} with maxOccurs {max}")));
        }
        Ok((min, max))
    }

    fn particle(&self, el: NodeId, local: &str, target: &str) -> Result<Particle, SchemaError> {
        let (min, max) = self.occurs(el)?;
        let term = match local {
            "element" => {
                if let Some(r) = self.attr(el, "ref") {
                    Term::Ref(self.resolve(r)?)
                } else {
                    let name = self.required_attr(el, "name")?;
                    let Some(t) = self.attr(el, "type") else {
                        return Err(self.unsupported("a local element without a named type"));
                    };
                    Term::Local {
                        name: Name {
                            ns: target.to_string(),
                            local: name.to_string(),
                        },
                        type_name: self.resolve(t)?,
                    }
                }
            }
            "any" => {
                let ns = self.attr(el, "namespace").unwrap_or("##any");
                if ns != "##other" {
                    return Err(self.unsupported(format!("xsd:any namespace=\"{ns}\"")));
                }
                Term::AnyOther {
                    target: target.to_string(),
                }
            }
            other => return Err(self.unsupported(format!("xsd:{other} inside xsd:sequence"))),
        };
        Ok(Particle { term, min, max })
    }

    fn attribute(&self, el: NodeId) -> Result<RawAttribute, SchemaError> {
        let use_ = self.attr(el, "use").unwrap_or("optional");
        Ok(RawAttribute {
            name: self.required_attr(el, "name")?.to_string(),
            type_name: self.resolve(self.attr(el, "type").unwrap_or("xsd:anySimpleType"))?,
            required: use_ == "required",
            prohibited: use_ == "prohibited",
        })
    }

    fn complex_type(&self, el: NodeId, target: &str) -> Result<RawType, SchemaError> {
        let mut content = Content::Empty;
        let mut attributes = Vec::new();
        for (c, local) in self.xsd_children(el)? {
            match local {
                "sequence" => {
                    let mut particles = Vec::new();
                    for (p, plocal) in self.xsd_children(c)? {
                        particles.push(self.particle(p, plocal, target)?);
                    }
                    content = Content::Sequence(particles);
                }
                "simpleContent" => {
                    let derivation = self.xsd_children(c)?;
                    let [(d, dlocal)] = derivation.as_slice() else {
                        return Err(self.unsupported("xsd:simpleContent without one derivation"));
                    };
                    match *dlocal {
                        "extension" | "restriction" => {}
                        other => {
                            return Err(
                                self.unsupported(format!("xsd:{other} in xsd:simpleContent"))
                            )
                        }
                    };
                    for (a, alocal) in self.xsd_children(*d)? {
                        if alocal != "attribute" {
                            return Err(self.unsupported(format!(
                                "xsd:{alocal} in a simple-content derivation (facets)"
                            )));
                        }
                        attributes.push(self.attribute(a)?);
                    }
                    content = Content::Simple {
                        base: self.resolve(self.required_attr(*d, "base")?)?,
                    };
                }
                "attribute" => attributes.push(self.attribute(c)?),
                other => return Err(self.unsupported(format!("xsd:{other} in xsd:complexType"))),
            }
        }
        if self.attr(el, "mixed") == Some("true") {
            return Err(self.unsupported("mixed content"));
        }
        Ok(RawType {
            content,
            attributes,
        })
    }
}

/// Read the XSD file `path` (its bytes `bytes`).
pub(crate) fn parse_schema(path: &Path, bytes: &[u8]) -> Result<RawSchema, SchemaError> {
    let doc = Document::parse(bytes).map_err(|e| SchemaError::Xml {
        file: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let r = Reader {
        doc: &doc,
        file: path,
        prefixes: root_namespaces(path, bytes)?,
    };
    let root = doc.document_element();
    if r.xsd_local(root) != Some("schema") {
        return Err(SchemaError::Invalid {
            file: path.to_path_buf(),
            message: "the document element is not xsd:schema".into(),
        });
    }
    if r.attr(root, "elementFormDefault") != Some("qualified")
        || r.attr(root, "attributeFormDefault")
            .is_some_and(|v| v != "unqualified")
    {
        return Err(r.unsupported(
            "forms other than elementFormDefault=\"qualified\" and unqualified attributes",
        ));
    }
    let target = r.attr(root, "targetNamespace").unwrap_or("").to_string();
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut schema = RawSchema {
        target: target.clone(),
        ..RawSchema::default()
    };
    for (c, local) in r.xsd_children(root)? {
        match local {
            "import" => {
                let ns = r.required_attr(c, "namespace")?.trim().to_string();
                let loc = r.required_attr(c, "schemaLocation")?;
                schema.imports.push((ns, dir.join(loc.trim())));
            }
            "include" => {
                let loc = r.required_attr(c, "schemaLocation")?;
                schema.includes.push(dir.join(loc.trim()));
            }
            "element" => {
                let name = r.required_attr(c, "name")?;
                let Some(t) = r.attr(c, "type") else {
                    return Err(r.unsupported("a global element without a named type"));
                };
                schema.elements.push(RawElement {
                    name: Name {
                        ns: target.clone(),
                        local: name.to_string(),
                    },
                    type_name: r.resolve(t)?,
                });
            }
            "complexType" => {
                let name = r.required_attr(c, "name")?;
                let t = r.complex_type(c, &target)?;
                schema.types.push((
                    Name {
                        ns: target.clone(),
                        local: name.to_string(),
                    },
                    t,
                ));
            }
            other => return Err(r.unsupported(format!("top-level xsd:{other}"))),
        }
    }
    Ok(schema)
}
