//! What a resume or a listing needs of a transcript, without its entry list: [`Summary`], how it
//! is derived from a whole scan, and how it is carried forward over appended entries alone.
//!
//! Owns: [`Summary::from_scan`] (the definition, through [`crate::tree`]) and
//! [`Summary::extend`], which must give exactly what `from_scan` gives on the whole file; when it
//! cannot be sure of that from the summary alone it declines, and the caller rescans.

use crate::envelope::{EntryKind, Extra, Role};
use crate::scan::{Entry, ScanReport};
use crate::tree::{self, SessionTree};
use std::collections::{HashMap, HashSet};

/// How many first user entry ids the summary keeps (listings ask for a handful).
pub const FIRST_USER_IDS: usize = 64;

/// How many distinct unresolved parent ids the summary lists before it gives up on them.
const UNRESOLVED_LIMIT: usize = 256;

/// One entry of the context plan, with the byte span of its line.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanItem {
    /// Index into the entry list.
    pub index: u64,
    pub id: String,
    pub offset: u64,
    pub length: u64,
}

/// Everything a resume or a listing needs, without the entry list.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Summary {
    /// The scan report with `entries` left empty.
    pub report: ScanReport,
    pub entry_count: u64,
    /// `(index, id)` of the leaf.
    pub leaf: Option<(u64, String)>,
    /// The line of the last entry (tells a torn last entry from a torn blank line).
    pub last_entry_line: Option<u64>,
    pub path_len: u64,
    pub cycle_detected: bool,
    pub unknown_parents: u64,
    pub duplicate_ids: u64,
    /// Distinct `parentId`s that name no entry (in first-seen order), unless there are more than
    /// 256 (`unresolved_overflow`).
    pub unresolved_parents: Vec<String>,
    pub unresolved_overflow: bool,
    /// The context plan (format §4.4) in context order.
    pub plan: Vec<PlanItem>,
    /// `(index, id)` of the compaction that starts the context.
    pub compaction: Option<(u64, String)>,
    pub strip_thinking_until: u64,
    /// Every label target in first-labelled order with its current label (`None`: cleared).
    pub label_state: Vec<(String, Option<String>)>,
    pub name: Option<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub message_count: u64,
    pub last_timestamp: Option<String>,
    /// The first [`FIRST_USER_IDS`] non-meta user messages in file order (listings show the
    /// first one's text).
    pub first_users: Vec<PlanItem>,
    /// Whether `first_users` holds all of them.
    pub first_users_complete: bool,
}

/// A copy of a report's fields other than its entries.
pub(super) fn without_entries(report: &ScanReport) -> ScanReport {
    ScanReport {
        header: report.header.clone(),
        format: report.format,
        entries: Vec::new(),
        skipped: report.skipped.clone(),
        file_size: report.file_size,
        ends_with_newline: report.ends_with_newline,
        has_bom: report.has_bom,
        legacy_entrypoint: report.legacy_entrypoint.clone(),
        line_count: report.line_count,
        last_line_offset: report.last_line_offset,
    }
}

fn is_user_prompt(entry: &Entry) -> bool {
    matches!(entry.extra, Extra::Message { role: Role::User, is_meta: false, .. })
}

fn is_counted_message(entry: &Entry) -> bool {
    matches!(entry.extra, Extra::Message { is_meta: false, .. })
}

fn plan_item(entries: &[Entry], base: usize, index: usize) -> PlanItem {
    let entry = &entries[index];
    PlanItem { index: (base + index) as u64, id: entry.id.to_string(), offset: entry.offset, length: entry.length }
}

/// The distinct unresolved parent ids in first-seen order, or none and `true` past the limit.
pub(super) fn distinct_unresolved<'a>(parents: impl Iterator<Item = &'a str>) -> (Vec<String>, bool) {
    let mut seen = HashSet::new();
    let mut distinct = Vec::new();
    for parent in parents {
        if seen.insert(parent) {
            if distinct.len() == UNRESOLVED_LIMIT {
                return (Vec::new(), true);
            }
            distinct.push(parent.to_owned());
        }
    }
    (distinct, false)
}

/// The first [`FIRST_USER_IDS`] non-meta user messages, and whether that is all of them.
pub(super) fn first_users(entries: &[Entry]) -> (Vec<PlanItem>, bool) {
    let mut first = Vec::new();
    for (index, _) in entries.iter().enumerate().filter(|(_, entry)| is_user_prompt(entry)) {
        if first.len() == FIRST_USER_IDS {
            return (first, false);
        }
        first.push(plan_item(entries, 0, index));
    }
    (first, true)
}

/// The label state after all these entries.
pub(super) fn label_state(entries: &[Entry]) -> Vec<(String, Option<String>)> {
    let mut state = Vec::new();
    apply_labels(&mut state, entries);
    state
}

/// Applies label entries in file order to a label state.
fn apply_labels(state: &mut Vec<(String, Option<String>)>, entries: &[Entry]) {
    let mut positions: HashMap<String, usize> =
        state.iter().enumerate().map(|(position, (target, _))| (target.clone(), position)).collect();
    for entry in entries {
        if let Extra::Label { target_id, label } = &entry.extra {
            let label = label.as_deref().map(str::to_owned);
            match positions.get(&**target_id) {
                Some(&position) => state[position].1 = label,
                None => {
                    positions.insert(target_id.to_string(), state.len());
                    state.push((target_id.to_string(), label));
                }
            }
        }
    }
}

impl Summary {
    /// Derives the summary of a scan and its tree.
    pub fn from_scan(report: &ScanReport, tree: &SessionTree) -> Self {
        let entries = &report.entries;
        let plan = tree.context_plan(entries);
        let unresolved = entries
            .iter()
            .zip(tree.parents())
            .filter(|(_, resolved)| resolved.is_none())
            .filter_map(|(entry, _)| entry.parent_id.as_deref());
        let (unresolved_parents, unresolved_overflow) = distinct_unresolved(unresolved);
        let (first_users, first_users_complete) = first_users(entries);
        Summary {
            report: without_entries(report),
            entry_count: entries.len() as u64,
            leaf: tree.leaf().map(|index| (index as u64, entries[index].id.to_string())),
            last_entry_line: entries.last().map(|entry| entry.line),
            path_len: tree.path().len() as u64,
            cycle_detected: tree.cycle_detected,
            unknown_parents: tree.unknown_parents as u64,
            duplicate_ids: tree.duplicate_ids as u64,
            unresolved_parents,
            unresolved_overflow,
            plan: plan.entries.iter().map(|&index| plan_item(entries, 0, index)).collect(),
            compaction: plan.compaction.map(|index| (index as u64, entries[index].id.to_string())),
            strip_thinking_until: plan.strip_thinking_until as u64,
            label_state: label_state(entries),
            name: tree::session_name(entries).map(str::to_owned),
            model: tree.model(entries).map(str::to_owned),
            effort: tree.effort(entries).map(str::to_owned),
            message_count: tree::message_count(entries) as u64,
            last_timestamp: entries.iter().map(|entry| &*entry.timestamp).max().map(str::to_owned),
            first_users,
            first_users_complete,
        }
    }

    /// The byte span of the entry with this id, when the summary knows it for sure: it is in the
    /// context plan or among the first user messages, and no id repeats in the file.
    pub fn span_of(&self, id: &str) -> Option<(u64, u64)> {
        if self.duplicate_ids != 0 {
            return None;
        }
        self.plan.iter().chain(&self.first_users).find(|item| item.id == id).map(|item| (item.offset, item.length))
    }

    /// Labels by target id, as [`tree::labels`] gives them (cleared ones left out).
    pub fn labels(&self) -> Vec<(String, String)> {
        self.label_state.iter().filter_map(|(target, label)| Some((target.clone(), label.clone()?))).collect()
    }

    /// The summary of the old entries followed by `added` (scanned from the appended bytes;
    /// `report` is the merged report, its entries being `added`), computed from this summary
    /// alone. `maybe_old_id(id)` says whether some old entry may have this id (no false
    /// negatives). `None` when that is not enough to be exact: a new entry repeats an old id or
    /// names an old unresolved parent, the new entries hang off an old entry other than the
    /// leaf, or a new compaction keeps entries from before them.
    pub fn extend(&self, report: &ScanReport, maybe_old_id: impl Fn(&str) -> bool) -> Option<Summary> {
        let added = &report.entries;
        let base = usize::try_from(self.entry_count).ok()?;
        let mut summary = Summary { report: without_entries(report), ..self.clone() };
        if added.is_empty() {
            return Some(summary);
        }
        if self.unresolved_overflow {
            return None;
        }
        let unresolved: HashSet<&str> = self.unresolved_parents.iter().map(String::as_str).collect();
        // The new ids: last one wins, as in the tree.
        let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(added.len());
        let mut duplicates = 0u64;
        for (index, entry) in added.iter().enumerate() {
            if maybe_old_id(&entry.id) || unresolved.contains(&*entry.id) {
                return None;
            }
            if by_id.insert(&entry.id, index).is_some() {
                duplicates += 1;
            }
        }
        let old_leaf = self.leaf.as_ref().map(|(_, id)| id.as_str());
        // Parents of the new entries: a new entry, the old leaf, or nothing.
        enum Parent {
            New(usize),
            OldLeaf,
            Unknown,
            Root,
        }
        let mut unresolved_added: Vec<String> = Vec::new();
        let mut unknown = 0u64;
        let mut parents = Vec::with_capacity(added.len());
        for entry in added {
            let parent = match entry.parent_id.as_deref() {
                None => Parent::Root,
                Some(id) => match by_id.get(id) {
                    Some(&index) => Parent::New(index),
                    None if Some(id) == old_leaf => Parent::OldLeaf,
                    None if maybe_old_id(id) => return None,
                    None => {
                        unknown += 1;
                        if !unresolved.contains(id) && !unresolved_added.iter().any(|seen| seen == id) {
                            unresolved_added.push(id.to_owned());
                        }
                        Parent::Unknown
                    }
                },
            };
            parents.push(parent);
        }
        // The path from the new leaf: new entries, then perhaps the whole old path.
        let mut visited = vec![false; added.len()];
        let mut chain = Vec::new();
        let mut cursor = Some(added.len() - 1);
        let mut reaches_old_path = false;
        let mut cycle = false;
        while let Some(index) = cursor {
            if visited[index] {
                cycle = true;
                break;
            }
            visited[index] = true;
            chain.push(index);
            cursor = match parents[index] {
                Parent::New(parent) => Some(parent),
                Parent::OldLeaf => {
                    reaches_old_path = true;
                    None
                }
                Parent::Unknown | Parent::Root => None,
            };
        }
        chain.reverse();
        let contextual = |indices: &[usize]| -> Vec<PlanItem> {
            indices
                .iter()
                .filter(|&&index| added[index].kind.is_contextual())
                .map(|&index| plan_item(added, base, index))
                .collect()
        };
        let compaction_at = chain.iter().rposition(|&index| added[index].kind == EntryKind::Compaction);
        match compaction_at {
            Some(position) => {
                let compaction = chain[position];
                let (first_kept, strip) = match &added[compaction].extra {
                    Extra::Compaction { first_kept_entry_id, strip_thinking_from_kept } => {
                        (&**first_kept_entry_id, *strip_thinking_from_kept)
                    }
                    _ => ("", false),
                };
                let before = &chain[..position];
                let kept_start = if first_kept.is_empty() {
                    None
                } else {
                    match before.iter().position(|&index| &*added[index].id == first_kept) {
                        // The old path can hold no new id, so this is its first place on the path.
                        Some(start) => Some(start),
                        // Somewhere on the old path, or nowhere: only the old entries can tell.
                        None if reaches_old_path && (maybe_old_id(first_kept) || Some(first_kept) == old_leaf) => {
                            return None
                        }
                        None => None,
                    }
                };
                let mut plan = vec![plan_item(added, base, compaction)];
                plan.extend(contextual(kept_start.map_or(&[][..], |start| &before[start..])));
                summary.strip_thinking_until = if strip { plan.len() as u64 } else { 0 };
                plan.extend(contextual(&chain[position + 1..]));
                summary.plan = plan;
                summary.compaction = Some(((base + compaction) as u64, added[compaction].id.to_string()));
            }
            None if reaches_old_path => summary.plan.extend(contextual(&chain)),
            None => {
                summary.plan = contextual(&chain);
                summary.compaction = None;
                summary.strip_thinking_until = 0;
            }
        }
        let on_chain = |pick: &dyn Fn(&Extra) -> Option<Option<&str>>| -> Option<Option<String>> {
            chain
                .iter()
                .rev()
                .find_map(|&index| pick(&added[index].extra).flatten())
                .map(|found| Some(found.to_owned()))
        };
        let model = on_chain(&|extra| match extra {
            Extra::ModelChange { model } => Some(model.as_deref()),
            Extra::Message { role: Role::Assistant, model: Some(model), .. } => Some(Some(model)),
            _ => None,
        });
        summary.model = model.unwrap_or_else(|| if reaches_old_path { self.model.clone() } else { None });
        let effort = on_chain(&|extra| match extra {
            Extra::EffortChange { effort } => Some(effort.as_deref()),
            _ => None,
        });
        summary.effort = effort.unwrap_or_else(|| if reaches_old_path { self.effort.clone() } else { None });
        summary.path_len = chain.len() as u64 + if reaches_old_path { self.path_len } else { 0 };
        summary.cycle_detected = cycle || (reaches_old_path && self.cycle_detected);
        summary.entry_count = (base + added.len()) as u64;
        summary.leaf = added.last().map(|entry| ((base + added.len() - 1) as u64, entry.id.to_string()));
        summary.last_entry_line = added.last().map(|entry| entry.line);
        summary.unknown_parents += unknown;
        summary.duplicate_ids += duplicates;
        summary.unresolved_parents.extend(unresolved_added);
        if summary.unresolved_parents.len() > UNRESOLVED_LIMIT {
            summary.unresolved_parents = Vec::new();
            summary.unresolved_overflow = true;
        }
        apply_labels(&mut summary.label_state, added);
        if added.iter().any(|entry| entry.kind == EntryKind::SessionInfo) {
            summary.name = tree::session_name(added).map(str::to_owned);
        }
        summary.message_count += added.iter().filter(|entry| is_counted_message(entry)).count() as u64;
        if let Some(latest) = added.iter().map(|entry| &*entry.timestamp).max() {
            if summary.last_timestamp.as_deref().is_none_or(|old| latest > old) {
                summary.last_timestamp = Some(latest.to_owned());
            }
        }
        if summary.first_users_complete {
            for (index, _) in added.iter().enumerate().filter(|(_, entry)| is_user_prompt(entry)) {
                if summary.first_users.len() == FIRST_USER_IDS {
                    summary.first_users_complete = false;
                    break;
                }
                summary.first_users.push(plan_item(added, base, index));
            }
        }
        Some(summary)
    }
}
