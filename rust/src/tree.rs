//! The session tree over scanned entries: parent links, the leaf, the active path, and the
//! plan of which entries make up the model context (format §4.4).
//!
//! The tree holds indices into the scan's entry list, never copies of payloads or ids: the id
//! table ([`IdTable`]) is one open-addressing array of entry indices tagged with a fast hash of
//! the id, probed against the entries themselves, so building it for a million entries costs a
//! few vectors and no allocation per entry. Cycles and unknown parents are tolerated: a walk
//! stops at the first entry it has already visited or cannot find.

use crate::envelope::{EntryKind, Extra, Role};
use crate::scan::Entry;
use std::collections::HashMap;

/// Which entries produce the context, in the order the model sees them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextPlan {
    /// Indices into the entry list: the compaction first (if any), then the kept entries before
    /// it, then everything after it; only entry kinds that contribute a message.
    pub entries: Vec<usize>,
    /// The compaction that starts the context, if any.
    pub compaction: Option<usize>,
    /// Plan positions `[0, n)` whose assistant messages lose thinking blocks
    /// (`stripThinkingFromKept`): the compaction itself and the kept entries before it.
    pub strip_thinking_until: usize,
}

/// Parent links and the active path of one transcript.
#[derive(Debug, Default)]
pub struct SessionTree {
    /// Entry id → index of the last entry with that id (JavaScript `Map.set` semantics).
    by_id: IdTable,
    /// Resolved parent of each entry; `None` for roots and unknown parents.
    parents: Vec<Option<usize>>,
    /// The leaf: the last valid entry in file order.
    leaf: Option<usize>,
    /// Root → leaf indices of the active path.
    path: Vec<usize>,
    /// Whether the path walk stopped at a cycle.
    pub cycle_detected: bool,
    /// Entries whose `parentId` names no entry.
    pub unknown_parents: usize,
    /// Ids used by more than one entry.
    pub duplicate_ids: usize,
}

impl SessionTree {
    /// Builds the tree with the leaf at the last entry.
    pub fn build(entries: &[Entry]) -> Self {
        Self::build_with_leaf(entries, entries.len().checked_sub(1))
    }

    /// Builds the tree with an explicit leaf (an index into `entries`, or `None` for an empty path).
    pub fn build_with_leaf(entries: &[Entry], leaf: Option<usize>) -> Self {
        use rayon::prelude::*;
        let (by_id, duplicate_ids) = IdTable::build(entries);
        // Lookups only read the table: both cores take a share.
        let parents: Vec<Option<usize>> = entries
            .par_iter()
            .with_min_len(4096)
            .map(|entry| by_id.get(entries, entry.parent_id.as_deref()?))
            .collect();
        let unknown_parents = entries
            .iter()
            .zip(&parents)
            .filter(|(entry, parent)| parent.is_none() && entry.parent_id.is_some())
            .count();
        let mut tree = SessionTree {
            by_id,
            parents,
            leaf,
            path: Vec::new(),
            cycle_detected: false,
            unknown_parents,
            duplicate_ids,
        };
        tree.walk_path();
        tree
    }

    fn walk_path(&mut self) {
        let mut visited = vec![false; self.parents.len()];
        let mut cursor = self.leaf;
        let mut path = Vec::new();
        while let Some(index) = cursor {
            if visited[index] {
                self.cycle_detected = true;
                break;
            }
            visited[index] = true;
            path.push(index);
            cursor = self.parents[index];
        }
        path.reverse();
        self.path = path;
    }

    /// Index of the entry with this id (the last one, when ids repeat); `entries` are the ones
    /// the tree was built from.
    pub fn index_of(&self, entries: &[Entry], id: &str) -> Option<usize> {
        self.by_id.get(entries, id)
    }

    /// The leaf entry's index.
    pub fn leaf(&self) -> Option<usize> {
        self.leaf
    }

    /// Root → leaf indices of the active path.
    pub fn path(&self) -> &[usize] {
        &self.path
    }

    /// The resolved parent index of every entry.
    pub fn parents(&self) -> &[Option<usize>] {
        &self.parents
    }

    /// Which entries the context is rebuilt from (format §4.4, steps 1–3 and 5).
    pub fn context_plan(&self, entries: &[Entry]) -> ContextPlan {
        let compaction_position = self.path.iter().rposition(|&index| entries[index].kind == EntryKind::Compaction);
        let Some(compaction_position) = compaction_position else {
            return ContextPlan {
                entries: self.contextual(entries, &self.path),
                compaction: None,
                strip_thinking_until: 0,
            };
        };
        let compaction = self.path[compaction_position];
        let (first_kept, strip) = match &entries[compaction].extra {
            Extra::Compaction { first_kept_entry_id, strip_thinking_from_kept } => {
                (first_kept_entry_id.as_ref(), *strip_thinking_from_kept)
            }
            _ => ("", false),
        };
        let before = &self.path[..compaction_position];
        let kept_start = before.iter().position(|&index| !first_kept.is_empty() && &*entries[index].id == first_kept);
        let kept: &[usize] = kept_start.map_or(&[], |start| &before[start..]);
        let mut plan = vec![compaction];
        plan.extend(self.contextual(entries, kept));
        let strip_thinking_until = if strip { plan.len() } else { 0 };
        plan.extend(self.contextual(entries, &self.path[compaction_position + 1..]));
        ContextPlan { entries: plan, compaction: Some(compaction), strip_thinking_until }
    }

    fn contextual(&self, entries: &[Entry], indices: &[usize]) -> Vec<usize> {
        indices.iter().copied().filter(|&index| entries[index].kind.is_contextual()).collect()
    }

    /// The current model: the last `model_change` on the path, or a later assistant `model`.
    pub fn model<'a>(&self, entries: &'a [Entry]) -> Option<&'a str> {
        self.path.iter().rev().find_map(|&index| match &entries[index].extra {
            Extra::ModelChange { model } => model.as_deref(),
            Extra::Message { role: Role::Assistant, model: Some(model), .. } => Some(model.as_ref()),
            _ => None,
        })
    }

    /// The current effort: the last `effort_change` on the path.
    pub fn effort<'a>(&self, entries: &'a [Entry]) -> Option<&'a str> {
        self.path.iter().rev().find_map(|&index| match &entries[index].extra {
            Extra::EffortChange { effort } => effort.as_deref(),
            _ => None,
        })
    }
}

/// The per-process secret of [`id_table_hash`]: drawn once from the operating system's
/// randomness (through std's `RandomState`, whose SipHash keys come from it).
fn process_key() -> IdKey {
    use std::hash::{BuildHasher, Hasher};
    static KEY: std::sync::OnceLock<IdKey> = std::sync::OnceLock::new();
    *KEY.get_or_init(|| {
        let draw = |salt: u64| {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(salt);
            hasher.finish()
        };
        // An odd multiplier: a folded product by an even one would lose bits.
        IdKey { seed: draw(1), multiplier: draw(2) | 1 }
    })
}

/// The secret an id table hashes with (see [`id_table_hash`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IdKey {
    seed: u64,
    multiplier: u64,
}

/// The 128-bit product of two words, its halves xor-ed together (foldhash's mixing step).
#[inline(always)]
fn folded_multiply(left: u64, right: u64) -> u64 {
    let product = u128::from(left) * u128::from(right);
    (product as u64) ^ ((product >> 64) as u64)
}

/// A fast keyed 64-bit hash of an id: eight bytes at a time, each folded into the state by a
/// 128-bit multiply with the secret multiplier. Keyed per process, so that a transcript cannot
/// be crafted to make its ids collide (an unkeyed multiply-rotate hash such as FxHash can be
/// made to collide for every seed, which would make the table's probing quadratic); every probe
/// still compares the id itself, so a collision costs time, never correctness.
#[inline]
pub(crate) fn id_table_hash(key: IdKey, id: &[u8]) -> u64 {
    let mut hash = key.seed ^ id.len() as u64;
    let mut chunks = id.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        hash = folded_multiply(hash ^ word, key.multiplier);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    folded_multiply(hash ^ u64::from_le_bytes(tail), key.multiplier)
}

/// Id → index of the last entry with that id (JavaScript `Map.set` semantics), without copying
/// any id: open addressing over `u64` slots, each `tag << INDEX_BITS | (index + 1)` (`0`: empty),
/// the tag being the hash's top bits; a tag match is confirmed against the entry's id.
#[derive(Debug, Default)]
pub(crate) struct IdTable {
    slots: Vec<u64>,
    mask: usize,
    key: IdKey,
}

/// Bits of a slot that hold the entry index + 1 (a trillion entries; no entry list that large
/// fits in memory).
const INDEX_BITS: u32 = 40;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

impl IdTable {
    /// The table over `entries`, and how many entries repeat an earlier id.
    pub(crate) fn build(entries: &[Entry]) -> (Self, usize) {
        let key = process_key();
        let capacity = (entries.len() * 2).next_power_of_two().max(16);
        let mut table = IdTable { slots: vec![0; capacity], mask: capacity - 1, key };
        let mut duplicates = 0;
        for (index, entry) in entries.iter().enumerate() {
            let hash = id_table_hash(key, entry.id.as_bytes());
            let tag = hash & !INDEX_MASK;
            let slot_value = tag | (index as u64 + 1);
            let mut position = hash as usize & table.mask;
            loop {
                let slot = table.slots[position];
                if slot == 0 {
                    table.slots[position] = slot_value;
                    break;
                }
                if slot & !INDEX_MASK == tag && entries[((slot & INDEX_MASK) - 1) as usize].id == entry.id {
                    table.slots[position] = slot_value;
                    duplicates += 1;
                    break;
                }
                position = (position + 1) & table.mask;
            }
        }
        (table, duplicates)
    }

    /// The index of the last entry with this id; `entries` are the ones the table was built from.
    pub(crate) fn get(&self, entries: &[Entry], id: &str) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(entries, id).0
    }

    /// The index of the last entry with this id, and how many slots the lookup looked at.
    fn probe(&self, entries: &[Entry], id: &str) -> (Option<usize>, usize) {
        let hash = id_table_hash(self.key, id.as_bytes());
        let tag = hash & !INDEX_MASK;
        let mut position = hash as usize & self.mask;
        let mut probes = 1;
        loop {
            let slot = self.slots[position];
            if slot == 0 {
                return (None, probes);
            }
            let index = ((slot & INDEX_MASK) - 1) as usize;
            if slot & !INDEX_MASK == tag && &*entries[index].id == id {
                return (Some(index), probes);
            }
            position = (position + 1) & self.mask;
            probes += 1;
        }
    }
}

/// Labels by target id: the newest `label` entry per target wins in file order; one without
/// `label` clears it.
pub fn labels(entries: &[Entry]) -> Vec<(Box<str>, Box<str>)> {
    let mut labels: HashMap<&str, Option<&str>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for entry in entries {
        if let Extra::Label { target_id, label } = &entry.extra {
            if labels.insert(target_id, label.as_deref()).is_none() {
                order.push(target_id);
            }
        }
    }
    order.into_iter().filter_map(|target| labels[target].map(|label| (Box::from(target), Box::from(label)))).collect()
}

/// The name from the latest `session_info` entry in the file; `None` when it is missing or empty.
pub fn session_name(entries: &[Entry]) -> Option<&str> {
    entries.iter().rev().find_map(|entry| match &entry.extra {
        Extra::SessionInfo { name } => Some(name.as_deref().map(str::trim).filter(|name| !name.is_empty())),
        _ => None,
    })?
}

/// Non-meta `message` entries in the whole file, every branch (the listing's count).
pub fn message_count(entries: &[Entry]) -> usize {
    entries.iter().filter(|entry| matches!(entry.extra, Extra::Message { is_meta: false, .. })).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan_bytes;

    fn scan(lines: &[&str]) -> Vec<Entry> {
        let mut data = String::from(r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#);
        data.push('\n');
        for line in lines {
            data.push_str(line);
            data.push('\n');
        }
        scan_bytes(data.as_bytes()).unwrap().entries
    }

    #[test]
    fn context_starts_at_last_compaction_and_keeps_from_first_kept() {
        let entries = scan(&[
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[]}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[]},"model":"m1"}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"t","message":{"role":"user","content":[]}}"#,
            r#"{"type":"compaction","id":"d","parentId":"c","timestamp":"t","summary":"s","firstKeptEntryId":"b","tokensBefore":1,"stripThinkingFromKept":true}"#,
            r#"{"type":"label","id":"e","parentId":"d","timestamp":"t","targetId":"a","label":"start"}"#,
            r#"{"type":"message","id":"f","parentId":"e","timestamp":"t","message":{"role":"assistant","content":[]}}"#,
        ]);
        let tree = SessionTree::build(&entries);
        let plan = tree.context_plan(&entries);
        let ids: Vec<&str> = plan.entries.iter().map(|&index| &*entries[index].id).collect();
        assert_eq!(ids, ["d", "b", "c", "f"]);
        assert_eq!(plan.strip_thinking_until, 3);
        assert_eq!(tree.model(&entries), Some("m1"));
        assert_eq!(labels(&entries), vec![(Box::from("a"), Box::from("start"))]);
    }

    #[test]
    fn first_kept_not_on_path_keeps_nothing_before() {
        let entries = scan(&[
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[]}}"#,
            r#"{"type":"compaction","id":"d","parentId":"a","timestamp":"t","summary":"s","firstKeptEntryId":"zz","tokensBefore":1}"#,
        ]);
        let plan = SessionTree::build(&entries).context_plan(&entries);
        assert_eq!(plan.entries, vec![1]);
    }

    #[test]
    fn cycles_and_unknown_parents_end_the_walk() {
        let entries = scan(&[
            r#"{"type":"custom","id":"a","parentId":"b","timestamp":"t","customType":"x"}"#,
            r#"{"type":"custom","id":"b","parentId":"a","timestamp":"t","customType":"x"}"#,
            r#"{"type":"custom","id":"c","parentId":"nope","timestamp":"t","customType":"x"}"#,
        ]);
        let tree = SessionTree::build_with_leaf(&entries, Some(1));
        assert!(tree.cycle_detected);
        assert_eq!(tree.path(), &[0, 1]);
        assert_eq!(tree.unknown_parents, 1);
        let tree = SessionTree::build(&entries);
        assert_eq!(tree.path(), &[2]);
    }

    #[test]
    fn label_without_text_clears_and_latest_session_info_wins() {
        let entries = scan(&[
            r#"{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"x","label":"one"}"#,
            r#"{"type":"label","id":"b","parentId":"a","timestamp":"t","targetId":"x"}"#,
            r#"{"type":"session_info","id":"c","parentId":"b","timestamp":"t","name":"first"}"#,
            r#"{"type":"session_info","id":"d","parentId":"c","timestamp":"t","name":"  "}"#,
        ]);
        assert!(labels(&entries).is_empty());
        assert_eq!(session_name(&entries), None);
    }

    #[test]
    fn hashes_spread_short_ids() {
        let mut seen = std::collections::HashSet::new();
        for index in 0..100_000u32 {
            assert!(seen.insert(id_table_hash(process_key(), format!("{index:08x}").as_bytes())));
        }
    }

    /// The id hash before it was keyed (FxHash's multiply-rotate, no secret): anyone can compute
    /// it, so anyone can write a transcript whose ids all land in one slot.
    fn unkeyed_fx(id: &[u8]) -> u64 {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut hash = id.len() as u64;
        let mut chunks = id.chunks_exact(8);
        for chunk in &mut chunks {
            hash = (hash.rotate_left(5) ^ u64::from_le_bytes(chunk.try_into().unwrap())).wrapping_mul(K);
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
        hash ^ (hash >> 32)
    }

    fn custom(id: &str) -> Entry {
        Entry {
            kind: EntryKind::Custom,
            id: id.into(),
            parent_id: None,
            timestamp: "t".into(),
            line: 0,
            offset: 0,
            length: 0,
            extra: Extra::None,
        }
    }

    /// Ids crafted to share one home slot under the unkeyed hash (found by search, as an
    /// attacker would) cost a keyed table a few probes each, not a walk over all the others:
    /// unkeyed, looking them all up would take about `count² / 2` probes.
    #[test]
    fn ids_crafted_to_collide_without_the_key_do_not_make_lookups_quadratic() {
        let count = 1024usize;
        let mask = (count * 2).next_power_of_two() as u64 - 1;
        let mut crafted = Vec::with_capacity(count);
        let mut id = *b"000000000000";
        while crafted.len() < count {
            if unkeyed_fx(&id) & mask == 0 {
                crafted.push(String::from_utf8(id.to_vec()).unwrap());
            }
            // The next id: count in hex, last digit fastest.
            for digit in id.iter_mut().rev() {
                *digit = match *digit {
                    b'9' => b'a',
                    b'f' => b'0',
                    other => other + 1,
                };
                if *digit != b'0' {
                    break;
                }
            }
        }
        let entries: Vec<Entry> = crafted.iter().map(|id| custom(id)).collect();
        let (table, duplicates) = IdTable::build(&entries);
        assert_eq!(duplicates, 0);
        assert_eq!(table.mask as u64, mask, "the crafted ids target this table size");
        let mut probes = 0;
        for (index, id) in crafted.iter().enumerate() {
            let (found, taken) = table.probe(&entries, id);
            assert_eq!(found, Some(index));
            probes += taken;
        }
        // Linear probing at load 1/2 takes 1.5 probes per hit on average; unkeyed, about 512.
        assert!(probes < 4 * count, "{probes} probes for {count} crafted ids");
        // A second key places the same ids elsewhere: the key, not the ids, decides the slots.
        let other = IdKey { seed: process_key().seed ^ 0x9e37_79b9_7f4a_7c15, multiplier: 0xd6e8_feb8_6659_fd93 };
        let moved = crafted
            .iter()
            .filter(|id| {
                id_table_hash(other, id.as_bytes()) & mask != id_table_hash(process_key(), id.as_bytes()) & mask
            })
            .count();
        assert!(moved > count / 2, "only {moved} of {count} ids moved under another key");
    }

    #[test]
    fn lookups_find_the_last_entry_of_an_id() {
        let mut lines = Vec::new();
        for index in 0..3000 {
            // Every id twice (the second time later in the file), plus ids that share hash tags.
            lines.push(format!(
                r#"{{"type":"custom","id":"e{}","parentId":null,"timestamp":"t","customType":"x"}}"#,
                index % 1500
            ));
        }
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let entries = scan(&lines);
        let tree = SessionTree::build(&entries);
        assert_eq!(tree.duplicate_ids, 1500);
        for index in 0..1500 {
            assert_eq!(tree.index_of(&entries, &format!("e{index}")), Some(index + 1500));
        }
        assert_eq!(tree.index_of(&entries, "e1500"), None);
        assert_eq!(tree.index_of(&entries, ""), None);
        assert_eq!(SessionTree::build(&[]).index_of(&[], "e1"), None);
    }
}
