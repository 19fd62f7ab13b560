//! The display order of a session tree for a navigator: every entry of every branch, children
//! ordered by time, flattened depth-first, computed once over the scan's entries so a front end
//! never builds a per-entry object for the 143k entries of a 1 GB session.
//!
//! A chain stays at one depth; only an entry with several children indents them. Hidden entry
//! kinds (a filter) are left out of the rows, their children are not. Entries a parent cycle cuts
//! off from every root are shown after the rest, each cycle from its first entry in file order.

use crate::envelope::{Extra, Role};
use crate::scan::Entry;
use crate::tree::SessionTree;

/// The navigator's filters that ask what a message holds, answered from the scan's envelopes
/// (no line is read again): "no tools" leaves out messages that are only tool calls or results,
/// "user only" keeps only the user's own prompts (not meta, not tool results).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    All,
    NoTools,
    UserOnly,
}

impl Filter {
    /// The filter a navigator names (`"default"`, `"no tools"`, `"user only"`), or `None`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "default" => Self::All,
            "no tools" => Self::NoTools,
            "user only" => Self::UserOnly,
            _ => return None,
        })
    }

    /// Whether the filter leaves `entry`'s row out.
    pub fn hides(self, entry: &Entry) -> bool {
        match (self, &entry.extra) {
            (Self::All, _) => false,
            (Self::NoTools, Extra::Message { tool_only, .. }) => *tool_only,
            (Self::NoTools, _) => false,
            (Self::UserOnly, Extra::Message { role: Role::User, is_meta: false, tool_only: false, .. }) => false,
            (Self::UserOnly, _) => true,
        }
    }
}

/// Row flag: the entry is on the active path.
pub const ON_PATH: u8 = 1;
/// Row flag: the entry has children (shown or not).
pub const HAS_CHILDREN: u8 = 2;

/// The rows of a navigator, one per shown entry, in display order.
#[derive(Debug, Default, PartialEq)]
pub struct Layout {
    /// Entry index (file order) of each row.
    pub order: Vec<u32>,
    /// Indent depth of each row.
    pub depth: Vec<u32>,
    /// `ON_PATH` | `HAS_CHILDREN` per row.
    pub flags: Vec<u8>,
    /// How many rows after each row belong to its subtree (they are contiguous).
    pub size: Vec<u32>,
}

/// Lays the tree out; `hidden(entry)` leaves an entry's row out.
pub fn layout(entries: &[Entry], tree: &SessionTree, hidden: &dyn Fn(&Entry) -> bool) -> Layout {
    let count = entries.len();
    let parents = tree.parents();
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); count];
    let mut roots: Vec<u32> = Vec::new();
    for (index, parent) in parents.iter().enumerate() {
        match parent {
            Some(parent) if *parent != index => children[*parent].push(index as u32),
            _ => roots.push(index as u32),
        }
    }
    let by_time = |a: &u32, b: &u32| entries[*a as usize].timestamp.cmp(&entries[*b as usize].timestamp).then(a.cmp(b));
    for kids in children.iter_mut().filter(|kids| kids.len() > 1) {
        kids.sort_by(by_time);
    }
    roots.sort_by(by_time);
    let mut on_path = vec![false; count];
    for &index in tree.path() {
        on_path[index] = true;
    }
    let mut out = Layout::default();
    let mut visited = vec![false; count];
    let root_depth = u32::from(roots.len() > 1);
    let starts: Vec<u32> = roots.into_iter().chain(0..count as u32).collect();
    // (entry, depth, row index of its open subtree or u32::MAX when it is being closed)
    let mut stack: Vec<(u32, u32, bool)> = Vec::new();
    let mut open_rows: Vec<Option<usize>> = Vec::new();
    for start in starts {
        if visited[start as usize] {
            continue;
        }
        stack.push((start, root_depth, false));
        while let Some((index, depth, closing)) = stack.pop() {
            if closing {
                if let Some(row) = open_rows.pop().flatten() {
                    out.size[row] = (out.order.len() - row - 1) as u32;
                }
                continue;
            }
            if visited[index as usize] {
                continue;
            }
            visited[index as usize] = true;
            let entry = &entries[index as usize];
            let kids = &children[index as usize];
            if hidden(entry) {
                open_rows.push(None);
            } else {
                let mut flags = 0;
                if on_path[index as usize] {
                    flags |= ON_PATH;
                }
                if !kids.is_empty() {
                    flags |= HAS_CHILDREN;
                }
                open_rows.push(Some(out.order.len()));
                out.order.push(index);
                out.depth.push(depth);
                out.flags.push(flags);
                out.size.push(0);
            }
            stack.push((index, depth, true));
            let child_depth = if kids.len() > 1 { depth + 1 } else { depth };
            stack.extend(kids.iter().rev().map(|&child| (child, child_depth, false)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{EntryKind, Extra};

    fn entry(id: &str, parent: Option<&str>, time: &str) -> Entry {
        Entry {
            kind: EntryKind::Message,
            id: id.into(),
            parent_id: parent.map(Into::into),
            timestamp: time.into(),
            line: 0,
            offset: 0,
            length: 0,
            extra: Extra::None,
        }
    }

    fn message(id: &str, role: Role, is_meta: bool, tool_only: bool) -> Entry {
        let extra = Extra::Message { role, is_meta, tool_only, message_id: None, model: None };
        Entry { extra, ..entry(id, None, "1") }
    }

    #[test]
    fn filters_read_the_envelope() {
        let prompt = message("p", Role::User, false, false);
        let result = message("r", Role::User, false, true);
        let meta = message("m", Role::User, true, false);
        let call = message("c", Role::Assistant, false, true);
        let reply = message("a", Role::Assistant, false, false);
        let other = entry("x", None, "1");
        let hidden = |filter: Filter| {
            [&prompt, &result, &meta, &call, &reply, &other]
                .iter()
                .filter(|e| filter.hides(e))
                .map(|e| &*e.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(hidden(Filter::All), Vec::<&str>::new());
        assert_eq!(hidden(Filter::NoTools), vec!["r", "c"]);
        assert_eq!(hidden(Filter::UserOnly), vec!["r", "m", "c", "a", "x"]);
        assert_eq!(Filter::parse("user only"), Some(Filter::UserOnly));
        assert_eq!(Filter::parse("labeled only"), None);
    }

    #[test]
    fn branches_indent_and_children_go_by_time() {
        let entries = vec![
            entry("a", None, "1"),
            entry("b", Some("a"), "2"),
            entry("d", Some("b"), "5"),
            entry("c", Some("b"), "3"),
            entry("e", Some("c"), "6"),
        ];
        let tree = SessionTree::build(&entries);
        let rows = layout(&entries, &tree, &|_| false);
        assert_eq!(rows.order, vec![0, 1, 3, 4, 2]);
        assert_eq!(rows.depth, vec![0, 0, 1, 1, 1]);
        assert_eq!(rows.size, vec![4, 3, 1, 0, 0]);
        assert_eq!(rows.flags[3] & ON_PATH, ON_PATH);
        assert_eq!(rows.flags[4] & ON_PATH, 0);
        let hidden = layout(&entries, &tree, &|entry| &*entry.id == "c");
        assert_eq!(hidden.order, vec![0, 1, 4, 2]);
        assert_eq!(hidden.size, vec![3, 2, 0, 0]);
    }

    #[test]
    fn a_cycle_cut_off_from_the_roots_is_still_shown() {
        let entries = vec![entry("a", None, "1"), entry("x", Some("y"), "2"), entry("y", Some("x"), "3")];
        let tree = SessionTree::build(&entries);
        let rows = layout(&entries, &tree, &|_| false);
        assert_eq!(rows.order.len(), 3);
    }
}
