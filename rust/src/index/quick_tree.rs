//! The tree facts a [`Summary`] needs (parents, leaf, active path, anomalies, context plan,
//! model, effort), computed the way [`crate::tree::SessionTree`] defines them, over the same
//! id table ([`crate::tree::IdTable`]) but with `u32` parents and path (half the memory), and
//! side by side with the facts that need no tree. `SessionTree` is still built, on demand, for
//! lookups by id.
//!
//! Owns: nothing of the semantics. `tests::agrees_with_session_tree` compares every fact with
//! `SessionTree` on random transcripts, so a change there that is not mirrored here fails.

use super::summary::{self, PlanItem, Summary};
use crate::envelope::{EntryKind, Extra, Role};
use crate::scan::{Entry, ScanReport};
use crate::tree::{self, IdTable};

/// Parent links and the active path, as `SessionTree` would have them.
pub(super) struct QuickTree {
    /// Resolved parent of each entry (`u32::MAX`: none or unknown).
    parents: Vec<u32>,
    leaf: Option<usize>,
    /// Root → leaf indices of the active path.
    path: Vec<u32>,
    cycle_detected: bool,
    unknown_parents: u64,
    duplicate_ids: u64,
}

const NONE: u32 = u32::MAX;

impl QuickTree {
    /// Builds the tree with the leaf at the last entry; `None` for more entries than it indexes.
    pub(super) fn build(entries: &[Entry]) -> Option<Self> {
        use rayon::prelude::*;
        if entries.len() >= NONE as usize {
            return None;
        }
        let (table, duplicate_ids) = IdTable::build(entries);
        let unique_ids = duplicate_ids == 0;
        let duplicate_ids = duplicate_ids as u64;
        // Lookups only read the table: both cores take a share. Most entries follow the one
        // before them (a chain of turns), and when no id repeats, that entry is the one the
        // table would name: comparing with it reads memory in order, where a lookup reads a
        // slot, an entry and its id at random places.
        let parents: Vec<u32> = entries
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .map(|(index, entry)| match entry.parent_id.as_deref() {
                None => NONE,
                Some(parent) if unique_ids && index > 0 && &*entries[index - 1].id == parent => index as u32 - 1,
                Some(parent) => table.get(entries, parent).map_or(NONE, |index| index as u32),
            })
            .collect();
        let unknown_parents =
            entries.iter().zip(&parents).filter(|(entry, &parent)| parent == NONE && entry.parent_id.is_some()).count()
                as u64;
        let leaf = entries.len().checked_sub(1);
        let mut visited = vec![false; entries.len()];
        let mut path = Vec::new();
        let mut cycle_detected = false;
        let mut cursor = leaf.map(|leaf| leaf as u32);
        while let Some(index) = cursor {
            if visited[index as usize] {
                cycle_detected = true;
                break;
            }
            visited[index as usize] = true;
            path.push(index);
            cursor = Some(parents[index as usize]).filter(|&parent| parent != NONE);
        }
        path.reverse();
        Some(QuickTree { parents, leaf, path, cycle_detected, unknown_parents, duplicate_ids })
    }

    /// The summary of a scan, as [`Summary::from_scan`] gives it (the tree and the facts that
    /// need no tree are worked out side by side); `None` for more entries than it indexes.
    pub(super) fn summarize_report(report: &ScanReport) -> Option<Summary> {
        let entries = &report.entries;
        let (quick, facts) = rayon::join(|| QuickTree::build(entries), || FileFacts::of(entries));
        Some(quick?.summarize_with(report, facts))
    }

    #[cfg(test)]
    fn summarize(&self, report: &ScanReport) -> Summary {
        self.summarize_with(report, FileFacts::of(&report.entries))
    }

    fn summarize_with(&self, report: &ScanReport, facts: FileFacts) -> Summary {
        let entries = &report.entries;
        let item = |index: u32| {
            let entry = &entries[index as usize];
            PlanItem { index: u64::from(index), id: entry.id.to_string(), offset: entry.offset, length: entry.length }
        };
        let contextual = |indices: &[u32]| -> Vec<PlanItem> {
            indices
                .iter()
                .filter(|&&index| entries[index as usize].kind.is_contextual())
                .map(|&index| item(index))
                .collect()
        };
        // The context plan (format §4.4), as `SessionTree::context_plan`.
        let compaction_position =
            self.path.iter().rposition(|&index| entries[index as usize].kind == EntryKind::Compaction);
        let (plan, compaction, strip_thinking_until) = match compaction_position {
            None => (contextual(&self.path), None, 0),
            Some(position) => {
                let compaction = self.path[position];
                let (first_kept, strip) = match &entries[compaction as usize].extra {
                    Extra::Compaction { first_kept_entry_id, strip_thinking_from_kept } => {
                        (&**first_kept_entry_id, *strip_thinking_from_kept)
                    }
                    _ => ("", false),
                };
                let before = &self.path[..position];
                let kept_start = before
                    .iter()
                    .position(|&index| !first_kept.is_empty() && &*entries[index as usize].id == first_kept);
                let kept: &[u32] = kept_start.map_or(&[], |start| &before[start..]);
                let mut plan = vec![item(compaction)];
                plan.extend(contextual(kept));
                let strip_until = if strip { plan.len() as u64 } else { 0 };
                plan.extend(contextual(&self.path[position + 1..]));
                (plan, Some((u64::from(compaction), entries[compaction as usize].id.to_string())), strip_until)
            }
        };
        let model = self.path.iter().rev().find_map(|&index| match &entries[index as usize].extra {
            Extra::ModelChange { model } => model.as_deref(),
            Extra::Message { role: Role::Assistant, model: Some(model), .. } => Some(model.as_ref()),
            _ => None,
        });
        let effort = self.path.iter().rev().find_map(|&index| match &entries[index as usize].extra {
            Extra::EffortChange { effort } => effort.as_deref(),
            _ => None,
        });
        let unresolved = entries
            .iter()
            .zip(&self.parents)
            .filter(|(_, &parent)| parent == NONE)
            .filter_map(|(entry, _)| entry.parent_id.as_deref());
        let (unresolved_parents, unresolved_overflow) = summary::distinct_unresolved(unresolved);
        Summary {
            report: summary::without_entries(report),
            entry_count: entries.len() as u64,
            leaf: self.leaf.map(|index| (index as u64, entries[index].id.to_string())),
            last_entry_line: entries.last().map(|entry| entry.line),
            path_len: self.path.len() as u64,
            cycle_detected: self.cycle_detected,
            unknown_parents: self.unknown_parents,
            duplicate_ids: self.duplicate_ids,
            unresolved_parents,
            unresolved_overflow,
            plan,
            compaction,
            strip_thinking_until,
            label_state: facts.label_state,
            name: facts.name,
            model: model.map(str::to_owned),
            effort: effort.map(str::to_owned),
            message_count: facts.message_count,
            last_timestamp: facts.last_timestamp,
            first_users: facts.first_users,
            first_users_complete: facts.first_users_complete,
        }
    }
}

/// The summary's facts that depend on the entries in file order only, not on the tree.
struct FileFacts {
    label_state: Vec<(String, Option<String>)>,
    name: Option<String>,
    message_count: u64,
    last_timestamp: Option<String>,
    first_users: Vec<PlanItem>,
    first_users_complete: bool,
}

impl FileFacts {
    fn of(entries: &[Entry]) -> Self {
        let (first_users, first_users_complete) = summary::first_users(entries);
        FileFacts {
            label_state: summary::label_state(entries),
            name: tree::session_name(entries).map(str::to_owned),
            message_count: tree::message_count(entries) as u64,
            last_timestamp: entries.iter().map(|entry| &*entry.timestamp).max().map(str::to_owned),
            first_users,
            first_users_complete,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan_bytes;
    use crate::tree::SessionTree;

    #[test]
    fn agrees_with_session_tree() {
        let mut state = 0xfeed_u64;
        let mut random = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for round in 0..400 {
            let mut data =
                String::from("{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n");
            let count = random(40) as usize;
            for index in 0..count {
                // Every other round without repeated ids: the parent then comes from the entry
                // before it, without a lookup, when its id matches.
                let id = if round % 2 == 0 && random(6) == 0 && index > 0 {
                    format!("e{}", random(index as u64))
                } else {
                    format!("e{index}")
                };
                let parent = match random(8) {
                    0 => "null".to_owned(),
                    1 => "\"ghost\"".to_owned(),
                    2 => format!("\"e{}\"", random(count as u64 + 1)),
                    _ if index > 0 => format!("\"e{}\"", index - 1),
                    _ => "null".to_owned(),
                };
                let body = match random(8) {
                    0 => format!(
                        r#""type":"compaction","summary":"s","firstKeptEntryId":"{}","tokensBefore":1,"stripThinkingFromKept":{}"#,
                        ["", "e1", "e3", "zz"][random(4) as usize],
                        random(2) == 0
                    ),
                    1 => format!(r#""type":"model_change"{}"#, if random(2) == 0 { r#","model":"m""# } else { "" }),
                    2 => {
                        format!(r#""type":"effort_change"{}"#, if random(2) == 0 { r#","effort":"high""# } else { "" })
                    }
                    3 => r#""type":"branch_summary","fromId":"root","summary":"b""#.to_owned(),
                    4 => r#""type":"label","targetId":"e1","label":"x""#.to_owned(),
                    _ => format!(
                        r#""type":"message","message":{{"role":"{}","content":[]}}{}"#,
                        ["user", "assistant", "tool"][random(3) as usize],
                        if random(2) == 0 { format!(r#","model":"x{index}""#) } else { String::new() }
                    ),
                };
                data.push_str(&format!(
                    "{{\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"t{}\",{body}}}\n",
                    random(9)
                ));
            }
            let report = scan_bytes(data.as_bytes()).unwrap();
            let expected = Summary::from_scan(&report, &SessionTree::build(&report.entries));
            let quick = QuickTree::build(&report.entries).unwrap();
            assert_eq!(quick.summarize(&report), expected, "round {round}: {data}");
            let tree = SessionTree::build(&report.entries);
            let parents: Vec<Option<usize>> =
                quick.parents.iter().map(|&parent| (parent != NONE).then_some(parent as usize)).collect();
            assert_eq!(parents, tree.parents(), "round {round}");
        }
    }
}
