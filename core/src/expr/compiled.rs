//! The expression compiled for matching one record's folded text: its
//! positive terms (what relevance and highlights count), the one that drives
//! a lane scan, and the tree evaluated per record.

use super::{Leaf, Node};
use crate::fold::OffsetMap;
use crate::matcher::Term;

/// A node over compiled terms.
#[derive(Clone, Debug)]
enum Tree {
    /// Positive term `i` of [`Compiled::terms`].
    Term(usize),
    /// A record without this term.
    Not(Box<Term>),
    And(Vec<Tree>),
    Or(Vec<Tree>),
}

/// An expression ready to match.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The positive terms, each once, in query order.
    pub terms: Vec<Term>,
    /// The required positive term to scan a lane for (the longest), if any.
    pub driver: Option<usize>,
    tree: Tree,
}

fn compile(leaf: &Leaf) -> Term {
    if leaf.word {
        Term::word(&leaf.text)
    } else {
        Term::new(&leaf.text)
    }
}

impl Compiled {
    /// Compiles `node`.
    pub fn new(node: &Node) -> Compiled {
        let positive = node.positive();
        let terms: Vec<Term> = positive.iter().map(compile).collect();
        let index = |l: &Leaf| positive.iter().position(|p| p == l).unwrap_or(0);
        fn tree(n: &Node, index: &dyn Fn(&Leaf) -> usize) -> Tree {
            match n {
                Node::Leaf(l) => Tree::Term(index(l)),
                Node::Not(l) => Tree::Not(Box::new(compile(l))),
                Node::And(v) => Tree::And(v.iter().map(|c| tree(c, index)).collect()),
                Node::Or(v) => Tree::Or(v.iter().map(|c| tree(c, index)).collect()),
            }
        }
        let required: Vec<usize> = match node {
            Node::Leaf(l) => vec![index(l)],
            Node::And(v) => v
                .iter()
                .filter_map(|c| match c {
                    Node::Leaf(l) => Some(index(l)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let driver = required
            .iter()
            .copied()
            .max_by_key(|&i| (terms[i].needle().len(), std::cmp::Reverse(i)));
        Compiled {
            tree: tree(node, &index),
            terms,
            driver,
        }
    }

    /// Whether a record's folded text (`hay`, boundary map `map`) matches.
    pub fn matches(&self, hay: &[u8], map: Option<&OffsetMap>) -> bool {
        self.eval(&self.tree, hay, map)
    }

    fn eval(&self, t: &Tree, hay: &[u8], map: Option<&OffsetMap>) -> bool {
        match t {
            Tree::Term(i) => self.terms[*i].occurs(hay, map),
            Tree::Not(term) => !term.occurs(hay, map),
            Tree::And(v) => v.iter().all(|c| self.eval(c, hay, map)),
            Tree::Or(v) => v.iter().any(|c| self.eval(c, hay, map)),
        }
    }
}
