//! Compiling raw XSD files into the validator's tables.
//!
//! Imports are followed lazily: a file is read only when a declaration refers to its
//! namespace. `ext:ExtensionContent` is a wildcard, so the signature schemas it imports
//! (one of them, the xmldsig schema, carries a DOCTYPE our parser refuses) are never read.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::parse::{self, Content, Name, RawSchema, RawType, Term, XSD_NS};
use super::simple::Builtin;
use super::{Attribute, Body, Particle, Schema, SchemaError, Sequence, TypeDef, TypeId, NO_TYPE};

/// Reads schema files (a directory on disk, or data in memory in tests).
pub trait SchemaSource {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
}

/// Files on disk.
pub struct FsSource;

impl SchemaSource for FsSource {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }
}

/// Lexically normalised path (`a/b/../c` → `a/c`), so one file is read once.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[derive(Default)]
struct Loader {
    /// Files read, by normalised path.
    files: HashMap<PathBuf, usize>,
    schemas: Vec<(PathBuf, RawSchema)>,
    /// Namespaces whose files have been read (a namespace may span included files).
    loaded_ns: HashSet<String>,
    elements: HashMap<Name, Name>,
    types: HashMap<Name, RawType>,
}

impl Loader {
    fn load(&mut self, src: &dyn SchemaSource, path: &Path) -> Result<(), SchemaError> {
        let path = normalise(path);
        if self.files.contains_key(&path) {
            return Ok(());
        }
        let bytes = src.read(&path).map_err(|e| SchemaError::Read {
            file: path.clone(),
            message: e.to_string(),
        })?;
        let raw = parse::parse_schema(&path, &bytes)?;
        self.files.insert(path.clone(), self.schemas.len());
        self.loaded_ns.insert(raw.target.clone());
        for e in &raw.elements {
            self.elements.insert(e.name.clone(), e.type_name.clone());
        }
        for (n, t) in &raw.types {
            self.types.insert(n.clone(), t.clone());
        }
        let includes = raw.includes.clone();
        self.schemas.push((path, raw));
        for inc in includes {
            self.load(src, &inc)?;
        }
        Ok(())
    }

    /// Read the file that some loaded schema imports for `ns`, if not read yet.
    fn ensure_namespace(&mut self, src: &dyn SchemaSource, ns: &str) -> Result<(), SchemaError> {
        if ns == XSD_NS || self.loaded_ns.contains(ns) {
            return Ok(());
        }
        let location = self
            .schemas
            .iter()
            .flat_map(|(_, s)| s.imports.iter())
            .find(|(n, _)| n == ns)
            .map(|(_, p)| p.clone());
        match location {
            Some(p) => self.load(src, &p),
            None => Err(SchemaError::Unresolved(format!(
                "no import for the namespace {ns}"
            ))),
        }
    }
}

struct Compiler<'s> {
    src: &'s dyn SchemaSource,
    loader: Loader,
    schema: Schema,
    type_ids: HashMap<Name, TypeId>,
}

impl Compiler<'_> {
    fn element_name_id(&mut self, name: &Name) -> u32 {
        self.schema.intern(&name.ns, &name.local)
    }

    fn global_element_type(&mut self, name: &Name) -> Result<TypeId, SchemaError> {
        self.loader.ensure_namespace(self.src, &name.ns)?;
        let t = self.loader.elements.get(name).cloned().ok_or_else(|| {
            SchemaError::Unresolved(format!("element {{{}}}{}", name.ns, name.local))
        })?;
        self.type_id(&t)
    }

    /// The compiled id of a named type, compiling it (and what it needs) on first use.
    fn type_id(&mut self, name: &Name) -> Result<TypeId, SchemaError> {
        if let Some(&id) = self.type_ids.get(name) {
            return Ok(id);
        }
        let id = self.schema.types.len() as TypeId;
        self.schema.types.push(TypeDef {
            name: name.local.clone(),
            attributes: Vec::new(),
            body: Body::Pending,
        });
        self.type_ids.insert(name.clone(), id);
        if name.ns == XSD_NS {
            let b = Builtin::by_name(&name.local).ok_or_else(|| SchemaError::Unsupported {
                file: PathBuf::new(),
                what: format!("the built-in type xs:{}", name.local),
            })?;
            self.schema.types[id as usize].body = Body::Simple(b);
            return Ok(id);
        }
        self.loader.ensure_namespace(self.src, &name.ns)?;
        let raw = self.loader.types.get(name).cloned().ok_or_else(|| {
            SchemaError::Unresolved(format!("type {{{}}}{}", name.ns, name.local))
        })?;
        // Elements are checked by their own type, wherever they occur: the element
        // references compile after this type's slot exists, so recursive content (an
        // aggregate that contains itself) is fine.
        let (body, attributes) = self.compile_type(name, &raw)?;
        let t = &mut self.schema.types[id as usize];
        t.body = body;
        t.attributes = attributes;
        Ok(id)
    }

    fn compile_type(
        &mut self,
        name: &Name,
        raw: &RawType,
    ) -> Result<(Body, Vec<Attribute>), SchemaError> {
        let mut attributes: Vec<Attribute> = Vec::new();
        let body = match &raw.content {
            Content::Empty => Body::Empty,
            Content::Sequence(particles) => Body::Elements(self.sequence(name, particles)?),
            Content::Simple { base } => {
                let base_id = self.type_id(base)?;
                let base_def = &self.schema.types[base_id as usize];
                if base_def.body.is_pending() {
                    return Err(SchemaError::Unsupported {
                        file: PathBuf::new(),
                        what: format!("the recursive derivation of {}", name.local),
                    });
                }
                let Body::Simple(b) = base_def.body else {
                    return Err(SchemaError::Unsupported {
                        file: PathBuf::new(),
                        what: format!(
                            "{}: simple content derived from a type without simple content",
                            name.local
                        ),
                    });
                };
                // Extension and restriction alike inherit the base's attribute uses
                // (XSD 1.0, 3.4.2); this type's own declarations replace same-named ones.
                attributes = base_def.attributes.clone();
                Body::Simple(b)
            }
        };
        for a in &raw.attributes {
            attributes.retain(|x| x.name != a.name);
            if a.prohibited {
                continue;
            }
            let t = self.type_id(&a.type_name)?;
            let Body::Simple(b) = self.schema.types[t as usize].body else {
                return Err(SchemaError::Unsupported {
                    file: PathBuf::new(),
                    what: format!("attribute {} of a non-simple type", a.name),
                });
            };
            attributes.push(Attribute {
                name: a.name.clone(),
                builtin: b,
                required: a.required,
            });
        }
        Ok((body, attributes))
    }

    fn sequence(&mut self, owner: &Name, raw: &[parse::Particle]) -> Result<Sequence, SchemaError> {
        let mut particles = Vec::with_capacity(raw.len());
        let mut by_name: BTreeMap<u32, u16> = BTreeMap::new();
        let mut wildcard = None;
        for (i, p) in raw.iter().enumerate() {
            let index = u16::try_from(i).map_err(|_| SchemaError::Unsupported {
                file: PathBuf::new(),
                what: format!("{}: a sequence of more than 65,535 particles", owner.local),
            })?;
            let (name, ty) = match &p.term {
                Term::Ref(n) => (Some(self.element_name_id(n)), self.global_element_type(n)?),
                Term::Local { name, type_name } => {
                    (Some(self.element_name_id(name)), self.type_id(type_name)?)
                }
                Term::AnyOther { target } => {
                    if wildcard.is_some() {
                        return Err(SchemaError::Unsupported {
                            file: PathBuf::new(),
                            what: format!("{}: two wildcards in one sequence", owner.local),
                        });
                    }
                    wildcard = Some((index, target.clone()));
                    (None, NO_TYPE)
                }
            };
            if let Some(n) = name {
                // Deterministic sequences name each element once (UBL does); a repeated
                // name would need a real automaton with counters.
                if by_name.insert(n, index).is_some() {
                    return Err(SchemaError::Unsupported {
                        file: PathBuf::new(),
                        what: format!("{}: an element named twice in one sequence", owner.local),
                    });
                }
            }
            particles.push(Particle {
                name,
                ty,
                min: p.min,
                max: p.max,
            });
        }
        // next_required[i]: the first particle at or after i with minOccurs > 0.
        let mut next_required = vec![particles.len() as u16; particles.len() + 1];
        for i in (0..particles.len()).rev() {
            next_required[i] = if particles[i].min > 0 {
                i as u16
            } else {
                next_required[i + 1]
            };
        }
        Ok(Sequence {
            particles,
            by_name: by_name.into_iter().collect(),
            wildcard,
            next_required,
        })
    }
}

/// Compile the schemas whose entry files are `entries` (their global elements become the
/// accepted document elements).
pub fn compile(src: &dyn SchemaSource, entries: &[&Path]) -> Result<Schema, SchemaError> {
    let mut c = Compiler {
        src,
        loader: Loader::default(),
        schema: Schema::empty(),
        type_ids: HashMap::new(),
    };
    let mut roots = Vec::new();
    for e in entries {
        c.loader.load(src, e)?;
        let idx = c.loader.files[&normalise(e)];
        let names: Vec<Name> = c.loader.schemas[idx]
            .1
            .elements
            .iter()
            .map(|e| e.name.clone())
            .collect();
        roots.extend(names);
    }
    for r in &roots {
        let ty = c.global_element_type(r)?;
        let id = c.element_name_id(r);
        c.schema.roots.push((id, ty));
    }
    // Every global element of the loaded schemas, for checking children that a parent's
    // content model did not expect (the finding is on the parent; their own content is
    // still checked, as a reader of the report expects).
    let globals: Vec<(Name, Name)> = c
        .loader
        .elements
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    for (n, t) in globals {
        let ty = c.type_id(&t)?;
        let id = c.element_name_id(&n);
        c.schema.set_global(id, ty);
    }
    if let Some(t) = c.schema.types.iter().find(|t| t.body.is_pending()) {
        return Err(SchemaError::Unresolved(format!(
            "type {} did not compile",
            t.name
        )));
    }
    Ok(c.schema)
}
