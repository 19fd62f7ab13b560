//! Secret redaction: replaces the `s` group of every match of a rule table in a text.
//!
//! The rules (patterns and their markers) come from the caller (`export/redact.py` owns the
//! table); this module only matches. Rules run one after the other over the text, each on the
//! output of the previous one; a match that holds a marker already written (the markers' common
//! prefix, e.g. `[REDACTED:`) is left alone, so `TOKEN=ghp_…` counts once, as a GitHub token. A
//! rule without a group named `s` replaces its whole match.

use regex::Regex;

/// One compiled rule: its pattern and the text that replaces each match's `s` group.
#[derive(Debug)]
struct Rule {
    regex: Regex,
    group: Option<usize>,
    marker: String,
}

/// A compiled rule table.
#[derive(Debug)]
pub struct Redactor {
    rules: Vec<Rule>,
    marker_prefix: String,
}

impl Redactor {
    /// Compiles `patterns` (Rust `regex` syntax without its Unicode tables: no `\s`, `\w`, `\d`,
    /// `\p{..}` or `(?i)` in Unicode mode; classes spelled out, `(?-u:\b)`, `(?i-u:…)`), each
    /// replaced by the marker of the same index.
    ///
    /// # Errors
    /// The pattern's index and the compiler's message when one does not compile.
    pub fn new(patterns: &[String], markers: &[String]) -> Result<Redactor, (usize, String)> {
        if patterns.len() != markers.len() {
            return Err((patterns.len().min(markers.len()), "patterns and markers differ in number".to_owned()));
        }
        let mut rules = Vec::with_capacity(patterns.len());
        for (index, (pattern, marker)) in patterns.iter().zip(markers).enumerate() {
            let regex = Regex::new(pattern).map_err(|error| (index, error.to_string()))?;
            let group = regex.capture_names().position(|name| name == Some("s"));
            rules.push(Rule { regex, group, marker: marker.clone() });
        }
        let marker_prefix = common_prefix(markers);
        Ok(Redactor { rules, marker_prefix })
    }

    /// `text` with every rule applied, and `(rule index, replacements)` for each rule that matched.
    /// Returns `None` for the text when nothing matched (the caller keeps its own copy).
    #[must_use]
    pub fn redact(&self, text: &str) -> (Option<String>, Vec<(usize, usize)>) {
        let mut current: Option<String> = None;
        let mut counts = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            let source = current.as_deref().unwrap_or(text);
            if let Some((replaced, count)) = rule.apply(source, &self.marker_prefix) {
                counts.push((index, count));
                current = Some(replaced);
            }
        }
        (current, counts)
    }
}

fn common_prefix(markers: &[String]) -> String {
    let Some(first) = markers.first() else { return String::new() };
    let mut length = first.len();
    for marker in &markers[1..] {
        length = first.bytes().zip(marker.bytes()).take(length).take_while(|(a, b)| a == b).count();
    }
    while !first.is_char_boundary(length) {
        length -= 1;
    }
    first[..length].to_owned()
}

impl Rule {
    fn apply(&self, text: &str, marker_prefix: &str) -> Option<(String, usize)> {
        let holds_marker =
            |start: usize, end: usize| !marker_prefix.is_empty() && text[start..end].contains(marker_prefix);
        let mut spans: Vec<(usize, usize)> = Vec::new();
        match self.group {
            Some(group) => {
                for captures in self.regex.captures_iter(text) {
                    if let Some(found) = captures.get(group) {
                        if !holds_marker(found.start(), found.end()) {
                            spans.push((found.start(), found.end()));
                        }
                    }
                }
            }
            None => spans.extend(
                self.regex
                    .find_iter(text)
                    .map(|found| (found.start(), found.end()))
                    .filter(|&(start, end)| !holds_marker(start, end)),
            ),
        }
        if spans.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for &(start, end) in &spans {
            out.push_str(&text[last..start]);
            out.push_str(&self.marker);
            last = end;
        }
        out.push_str(&text[last..]);
        Some((out, spans.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::Redactor;

    fn redactor(rules: &[(&str, &str)]) -> Redactor {
        let patterns: Vec<String> = rules.iter().map(|(pattern, _)| (*pattern).to_owned()).collect();
        let markers: Vec<String> = rules.iter().map(|(_, marker)| (*marker).to_owned()).collect();
        Redactor::new(&patterns, &markers).unwrap()
    }

    #[test]
    fn replaces_only_the_secret_group() {
        let table = redactor(&[(r"Bearer (?P<s>[a-z0-9]{8,})", "[R]")]);
        let (text, counts) = table.redact("a Bearer abcdefgh1 and Bearer xyz");
        assert_eq!(text.as_deref(), Some("a Bearer [R] and Bearer xyz"));
        assert_eq!(counts, vec![(0, 1)]);
    }

    #[test]
    fn untouched_text_is_none() {
        let table = redactor(&[(r"secret", "[R]")]);
        assert_eq!(table.redact("nothing here"), (None, vec![]));
    }

    #[test]
    fn rules_apply_in_order_and_count_apart() {
        let table = redactor(&[(r"aa", "<1>"), (r"(?P<s>b+)", "<2>")]);
        let (text, counts) = table.redact("aa bb aa b");
        assert_eq!(text.as_deref(), Some("<1> <2> <1> <2>"));
        assert_eq!(counts, vec![(0, 2), (1, 2)]);
    }

    #[test]
    fn a_marker_is_not_matched_again() {
        let table = redactor(&[(r"(?P<s>ghp_[a-z]+)", "[X:github]"), (r"TOKEN=(?P<s>[^ ]+)", "[X:env]")]);
        let (text, counts) = table.redact("TOKEN=ghp_abc TOKEN=plain");
        assert_eq!(text.as_deref(), Some("TOKEN=[X:github] TOKEN=[X:env]"));
        assert_eq!(counts, vec![(0, 1), (1, 1)]);
    }

    #[test]
    fn a_bad_pattern_names_its_index() {
        let patterns = vec!["ok".to_owned(), "(".to_owned()];
        let markers = vec!["x".to_owned(), "y".to_owned()];
        assert_eq!(Redactor::new(&patterns, &markers).unwrap_err().0, 1);
    }
}
