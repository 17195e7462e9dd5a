//! Source positions of YAML nodes, for semantic errors that serde cannot locate.
//!
//! serde-saphyr reports syntax and schema errors with a location, but once a file has been
//! deserialized the positions are gone. This module parses the same text again with
//! granit-parser, the event parser serde-saphyr itself reads with (its events carry spans),
//! into a small tree of positions, so that a semantic error (a bad XPath in
//! `rules[3].asserts[1].test`, a duplicate rule id, a missing fixture file) can be reported
//! as `file:line:column`. Aliases are not expanded (an alias is an empty scalar at its own
//! position), and the tree is built without recursion, so any text parses in bounded stack.

use granit_parser::{Event, Marker, Parser, Span};

/// A 1-based line and column in a source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    fn from_marker(m: &Marker) -> Pos {
        // granit-parser lines are 1-based, columns 0-based.
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
    /// `pos`: where its first item starts; `start`: where the sequence starts (`[` or the
    /// first `-`).
    Seq {
        items: Vec<Node>,
        pos: Pos,
        start: Pos,
    },
    /// `pos`: where its first key starts; `start`: where the mapping starts (`{` or the
    /// first key).
    Map {
        entries: Vec<(String, Pos, Node)>,
        pos: Pos,
        start: Pos,
    },
}

impl Node {
    fn pos(&self) -> Pos {
        match self {
            Node::Scalar { pos, .. } | Node::Seq { pos, .. } | Node::Map { pos, .. } => *pos,
        }
    }

    fn start(&self) -> Pos {
        match self {
            Node::Scalar { pos, .. } => *pos,
            Node::Seq { start, .. } | Node::Map { start, .. } => *start,
        }
    }
}

/// The positions of every node of one YAML document.
#[derive(Debug, Clone)]
pub struct PosTree {
    root: Option<Node>,
}

impl PosTree {
    /// Parse `text`; a text the event parser rejects, or one nested deeper than
    /// [`crate::yaml::MAX_DEPTH`], yields an empty tree (every lookup then answers line 1,
    /// column 1; serde reports the syntax error itself).
    pub fn parse(text: &str) -> PosTree {
        let mut options = granit_parser::Options::default();
        // Comments carry no positions anyone asks for.
        options.emit_comments = false;
        let mut parser = Parser::new_from_str_with_options(text, options);
        let mut builder = Builder::default();
        // The first document only, as serde reads it.
        while let Some(next) = parser.next_event() {
            let Ok((event, span)) = next else {
                return PosTree { root: None };
            };
            if matches!(event, Event::DocumentEnd | Event::StreamEnd) {
                break;
            }
            builder.on_event(event, span);
            if builder.stack.len() > crate::yaml::MAX_DEPTH {
                return PosTree { root: None };
            }
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

    /// Position of the mapping (its first key) one of whose keys stands at `key`.
    pub fn mapping_of_key(&self, key: Pos) -> Option<Pos> {
        let mut pending: Vec<&Node> = self.root.iter().collect();
        while let Some(node) = pending.pop() {
            match node {
                Node::Map { entries, pos, .. } => {
                    if entries.iter().any(|(_, key_pos, _)| *key_pos == key) {
                        return Some(*pos);
                    }
                    pending.extend(entries.iter().map(|(_, _, value)| value));
                }
                Node::Seq { items, .. } => pending.extend(items),
                Node::Scalar { .. } => {}
            }
        }
        None
    }

    /// The path (`rules[0].asserts[1].test`, as serde_yaml wrote it in its messages) of the
    /// node starting at `at`, or of the mapping one of whose keys starts there; `None` for the
    /// root, or when nothing starts there.
    pub fn path_at(&self, at: Pos) -> Option<String> {
        let mut pending: Vec<(&Node, String)> =
            self.root.iter().map(|n| (n, String::new())).collect();
        while let Some((node, path)) = pending.pop() {
            if node.start() == at {
                return (!path.is_empty()).then_some(path);
            }
            match node {
                Node::Map { entries, .. } => {
                    if entries.iter().any(|(_, key_pos, _)| *key_pos == at) {
                        return (!path.is_empty()).then_some(path);
                    }
                    for (key, _, value) in entries {
                        let child = if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        };
                        pending.push((value, child));
                    }
                }
                Node::Seq { items, .. } => {
                    for (i, item) in items.iter().enumerate() {
                        pending.push((item, format!("{path}[{i}]")));
                    }
                }
                Node::Scalar { .. } => {}
            }
        }
        None
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
    /// Items, start of the sequence.
    Seq(Vec<Node>, Pos),
    /// Entries, pending key (text, position), position of the first key, start of the
    /// mapping.
    Map(
        Vec<(String, Pos, Node)>,
        Option<(String, Pos)>,
        Option<Pos>,
        Pos,
    ),
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
            Some(Frame::Map(entries, pending, map_pos, _)) => match pending.take() {
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

    fn on_event(&mut self, ev: Event<'_>, span: Span) {
        let pos = Pos::from_marker(&span.start);
        match ev {
            Event::Scalar(value, ..) => self.push_node(Node::Scalar {
                value: value.into_owned(),
                pos,
            }),
            Event::Alias(_) => self.push_node(Node::Scalar {
                value: String::new(),
                pos,
            }),
            Event::SequenceStart(..) => self.stack.push(Frame::Seq(Vec::new(), pos)),
            Event::MappingStart(..) => self.stack.push(Frame::Map(Vec::new(), None, None, pos)),
            Event::SequenceEnd => {
                if let Some(Frame::Seq(items, start)) = self.stack.pop() {
                    let pos = items.first().map(Node::pos).unwrap_or(start);
                    self.push_node(Node::Seq { items, pos, start });
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map(entries, _, map_pos, start)) = self.stack.pop() {
                    self.push_node(Node::Map {
                        entries,
                        pos: map_pos.unwrap_or(start),
                        start,
                    });
                }
            }
            // Stream and document boundaries, comments.
            _ => {}
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
    fn paths_and_mappings_of_positions() {
        let t = PosTree::parse(TEXT);
        let at = |line, column| Pos { line, column };
        // A scalar value, a key (its mapping), a flow sequence and its item.
        assert_eq!(
            t.path_at(at(6, 15)).as_deref(),
            Some("rules[0].asserts[0].flag")
        );
        assert_eq!(t.path_at(at(9, 9)).as_deref(), Some("rules[0].asserts[1]"));
        assert_eq!(
            t.path_at(at(10, 36)).as_deref(),
            Some("rules[0].asserts[1].fixtures")
        );
        assert_eq!(
            t.path_at(at(10, 42)).as_deref(),
            Some("rules[0].asserts[1].fixtures.fail")
        );
        assert_eq!(
            t.path_at(at(10, 43)).as_deref(),
            Some("rules[0].asserts[1].fixtures.fail[0]")
        );
        assert_eq!(t.path_at(at(1, 1)), None, "the root");
        assert_eq!(t.path_at(at(1, 2)), None, "nothing starts there");
        assert_eq!(t.mapping_of_key(at(9, 9)), Some(at(8, 9)));
        assert_eq!(t.mapping_of_key(at(1, 1)), Some(at(1, 1)));
        assert_eq!(t.mapping_of_key(at(6, 15)), None);
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
