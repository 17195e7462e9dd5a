//! Source positions of YAML nodes, for semantic errors that serde cannot locate.
//!
//! serde_yaml reports syntax and schema errors with a location, but once a file has been
//! deserialized the positions are gone. This module parses the same text again with
//! `yaml-rust2`'s event parser (which carries markers) into a small tree of positions, so
//! that a semantic error (a bad XPath in `rules[3].asserts[1].test`, a duplicate rule id,
//! a missing fixture file) can be reported as `file:line:column`.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// A 1-based line and column in a source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    fn from_marker(m: &Marker) -> Pos {
        // yaml-rust2 lines are 1-based, columns 0-based.
        Pos {
            line: m.line().max(1),
            column: m.col() + 1,
        }
    }
}

/// One step of a path into a YAML tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

#[derive(Debug, Clone)]
enum Node {
    Scalar {
        value: String,
        pos: Pos,
    },
    Seq {
        items: Vec<Node>,
        pos: Pos,
    },
    Map {
        entries: Vec<(String, Pos, Node)>,
        pos: Pos,
    },
}

impl Node {
    fn pos(&self) -> Pos {
        match self {
            Node::Scalar { pos, .. } | Node::Seq { pos, .. } | Node::Map { pos, .. } => *pos,
        }
    }
}

/// The positions of every node of one YAML document.
#[derive(Debug, Clone)]
pub struct PosTree {
    root: Option<Node>,
}

impl PosTree {
    /// Parse `text`; a text the event parser rejects yields an empty tree (every lookup
    /// then answers line 1, column 1; serde reports the syntax error itself).
    pub fn parse(text: &str) -> PosTree {
        let mut builder = Builder::default();
        let mut parser = Parser::new_from_str(text);
        if parser.load(&mut builder, false).is_err() {
            return PosTree { root: None };
        }
        PosTree { root: builder.root }
    }

    /// Position of the node at `path`: for a final `Key` segment, the key itself; for an
    /// `Index`, the item. When the path does not exist, the deepest existing ancestor.
    pub fn locate(&self, path: &[Seg<'_>]) -> Pos {
        let Some(mut node) = self.root.as_ref() else {
            return Pos { line: 1, column: 1 };
        };
        let mut best = node.pos();
        for seg in path {
            match (seg, node) {
                (Seg::Key(k), Node::Map { entries, .. }) => {
                    match entries.iter().find(|(name, _, _)| name == k) {
                        Some((_, key_pos, value)) => {
                            best = *key_pos;
                            node = value;
                        }
                        None => return best,
                    }
                }
                (Seg::Index(i), Node::Seq { items, .. }) => match items.get(*i) {
                    Some(item) => {
                        best = item.pos();
                        node = item;
                    }
                    None => return best,
                },
                _ => return best,
            }
        }
        best
    }

    /// Position of the VALUE at `path` (for a scalar, where its text starts).
    pub fn locate_value(&self, path: &[Seg<'_>]) -> Pos {
        let Some(mut node) = self.root.as_ref() else {
            return Pos { line: 1, column: 1 };
        };
        for seg in path {
            let next = match (seg, node) {
                (Seg::Key(k), Node::Map { entries, .. }) => entries
                    .iter()
                    .find(|(name, _, _)| name == k)
                    .map(|(_, _, v)| v),
                (Seg::Index(i), Node::Seq { items, .. }) => items.get(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => return self.locate(path),
            }
        }
        node.pos()
    }

    /// The scalar text at `path`, if that node is a scalar.
    pub fn scalar(&self, path: &[Seg<'_>]) -> Option<&str> {
        let mut node = self.root.as_ref()?;
        for seg in path {
            node = match (seg, node) {
                (Seg::Key(k), Node::Map { entries, .. }) => entries
                    .iter()
                    .find(|(name, _, _)| name == k)
                    .map(|(_, _, v)| v)?,
                (Seg::Index(i), Node::Seq { items, .. }) => items.get(*i)?,
                _ => return None,
            };
        }
        match node {
            Node::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }
}

enum Frame {
    Seq(Vec<Node>, Pos),
    /// Entries, pending key (text, position), position of the mapping.
    Map(Vec<(String, Pos, Node)>, Option<(String, Pos)>, Option<Pos>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
}

impl Builder {
    fn push_node(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq(items, _)) => items.push(node),
            Some(Frame::Map(entries, pending, map_pos)) => match pending.take() {
                None => {
                    // This node is a key. Keys are scalars in pack files; a complex key is
                    // recorded by its position with an empty name.
                    let (text, pos) = match node {
                        Node::Scalar { value, pos } => (value, pos),
                        other => (String::new(), other.pos()),
                    };
                    if map_pos.is_none() {
                        *map_pos = Some(pos);
                    }
                    *pending = Some((text, pos));
                }
                Some((key, key_pos)) => entries.push((key, key_pos, node)),
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let pos = Pos::from_marker(&mark);
        match ev {
            Event::Scalar(value, ..) => self.push_node(Node::Scalar { value, pos }),
            Event::Alias(_) => self.push_node(Node::Scalar {
                value: String::new(),
                pos,
            }),
            Event::SequenceStart(..) => self.stack.push(Frame::Seq(Vec::new(), pos)),
            Event::MappingStart(..) => self.stack.push(Frame::Map(Vec::new(), None, None)),
            Event::SequenceEnd => {
                if let Some(Frame::Seq(items, seq_pos)) = self.stack.pop() {
                    let pos = items.first().map(Node::pos).unwrap_or(seq_pos);
                    self.push_node(Node::Seq { items, pos });
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map(entries, _, map_pos)) = self.stack.pop() {
                    self.push_node(Node::Map {
                        entries,
                        pos: map_pos.unwrap_or(pos),
                    });
                }
            }
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart
            | Event::DocumentEnd => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "pattern: model\nrules:\n  - context: /a\n    asserts:\n      - id: BR-01\n        flag: fatal\n        test: exists(b)\n      - id: BR-02\n        test: c\n        fixtures: {pass: [ok.xml], fail: [bad.xml]}\n";

    #[test]
    fn locates_keys_and_items() {
        let t = PosTree::parse(TEXT);
        let p = t.locate(&[
            Seg::Key("rules"),
            Seg::Index(0),
            Seg::Key("asserts"),
            Seg::Index(1),
            Seg::Key("test"),
        ]);
        assert_eq!(p, Pos { line: 9, column: 9 });
        let p = t.locate(&[
            Seg::Key("rules"),
            Seg::Index(0),
            Seg::Key("asserts"),
            Seg::Index(0),
        ]);
        assert_eq!(p, Pos { line: 5, column: 9 });
        let p = t.locate_value(&[
            Seg::Key("rules"),
            Seg::Index(0),
            Seg::Key("asserts"),
            Seg::Index(1),
            Seg::Key("fixtures"),
            Seg::Key("fail"),
            Seg::Index(0),
        ]);
        assert_eq!(
            p,
            Pos {
                line: 10,
                column: 43
            }
        );
        assert_eq!(
            t.scalar(&[
                Seg::Key("rules"),
                Seg::Index(0),
                Seg::Key("asserts"),
                Seg::Index(0),
                Seg::Key("id")
            ]),
            Some("BR-01")
        );
    }

    #[test]
    fn missing_path_falls_back_to_ancestor() {
        let t = PosTree::parse(TEXT);
        let p = t.locate(&[Seg::Key("rules"), Seg::Index(0), Seg::Key("lets")]);
        assert_eq!(p, Pos { line: 3, column: 5 });
        let broken = PosTree::parse("a: [");
        assert_eq!(broken.locate(&[Seg::Key("a")]), Pos { line: 1, column: 1 });
    }
}
