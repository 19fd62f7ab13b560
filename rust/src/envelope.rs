//! What one transcript line is: the JSON validation of a single line and the few fields the
//! scanner keeps (type, ids, timestamp and a handful of per-type values).
//!
//! Every line is fully validated as JSON (so corrupt lines are found exactly as the real CLI's
//! `JSON.parse` finds them), but nothing is materialized except the fields listed in
//! [`LineFields`]: big payloads such as tool results are skipped in place by [`crate::json`].
//! Duplicate keys resolve as in JavaScript: the last one wins. Keys are matched as raw bytes
//! (no UTF-8 check: only ASCII names are looked for), and a line's fields live on the stack.
//!
//! Owns: which fields of a line are read, and how ([`parse_fields`], [`parse_line`]).

pub use crate::json::Loose;
use crate::json::{Cursor, JsonError};

/// The nine entry types of a v3 transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    Message,
    ModelChange,
    EffortChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
}

impl EntryKind {
    /// Parses the `type` field; `None` for anything that is not one of the nine types.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "message" => Self::Message,
            "model_change" => Self::ModelChange,
            "effort_change" => Self::EffortChange,
            "compaction" => Self::Compaction,
            "branch_summary" => Self::BranchSummary,
            "custom" => Self::Custom,
            "custom_message" => Self::CustomMessage,
            "label" => Self::Label,
            "session_info" => Self::SessionInfo,
            _ => return None,
        })
    }

    /// The `type` string as written on disk.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::ModelChange => "model_change",
            Self::EffortChange => "effort_change",
            Self::Compaction => "compaction",
            Self::BranchSummary => "branch_summary",
            Self::Custom => "custom",
            Self::CustomMessage => "custom_message",
            Self::Label => "label",
            Self::SessionInfo => "session_info",
        }
    }

    /// Whether entries of this kind contribute a message to the model context (§4.4).
    pub fn is_contextual(self) -> bool {
        matches!(self, Self::Message | Self::Compaction | Self::BranchSummary | Self::CustomMessage)
    }
}

/// The role of a `message` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Other,
}

/// Per-type values the tree needs without re-reading the line.
#[derive(Clone, Debug, PartialEq)]
pub enum Extra {
    None,
    /// `tool_only`: the content is tool calls or results and no text ([`ContentFacts::tool_only`]).
    Message {
        role: Role,
        is_meta: bool,
        tool_only: bool,
        message_id: Option<Box<str>>,
        model: Option<Box<str>>,
    },
    Compaction {
        first_kept_entry_id: Box<str>,
        strip_thinking_from_kept: bool,
    },
    Label {
        target_id: Box<str>,
        label: Option<Box<str>>,
    },
    SessionInfo {
        name: Option<Box<str>>,
    },
    ModelChange {
        model: Option<Box<str>>,
    },
    EffortChange {
        effort: Option<Box<str>>,
    },
}

/// `message.meta` fields.
#[derive(Debug, Default)]
pub struct MetaFields<'a> {
    pub is_meta: Option<Loose<'a>>,
    pub message_id: Option<Loose<'a>>,
}

/// `message` fields.
#[derive(Debug, Default)]
pub struct MessageFields<'a> {
    pub role: Option<Loose<'a>>,
    pub meta: Option<MetaFields<'a>>,
    /// What `message.content` holds (the last `content` key wins).
    pub content: ContentFacts,
}

/// What a message's content holds, as the tree navigator's filters ask: a tool call or result,
/// and text that is not blank. A string content is one text block; blocks that are not objects
/// are ignored, as `sessions.context.content_blocks` does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContentFacts {
    pub has_tool: bool,
    pub has_text: bool,
}

impl ContentFacts {
    /// A message that is only tool traffic: a `tool_use` or `tool_result` block and no text.
    pub fn tool_only(self) -> bool {
        self.has_tool && !self.has_text
    }
}

/// Legacy v2 `metadata` fields.
#[derive(Debug, Default)]
pub struct MetadataFields<'a> {
    pub version: Option<Loose<'a>>,
    pub entrypoint: Option<Loose<'a>>,
}

/// The top-level fields of a line that the scanner looks at; all others are validated and skipped.
#[derive(Debug, Default)]
pub struct LineFields<'a> {
    pub kind: Option<Loose<'a>>,
    pub id: Option<Loose<'a>>,
    pub parent_id: Option<Loose<'a>>,
    pub timestamp: Option<Loose<'a>>,
    pub version: Option<Loose<'a>>,
    pub cwd: Option<Loose<'a>>,
    pub parent_session: Option<Loose<'a>>,
    pub session_id: Option<Loose<'a>>,
    pub role: Option<Loose<'a>>,
    pub message: Option<MessageFields<'a>>,
    pub metadata: Option<MetadataFields<'a>>,
    pub model: Option<Loose<'a>>,
    pub effort: Option<Loose<'a>>,
    pub first_kept_entry_id: Option<Loose<'a>>,
    pub strip_thinking_from_kept: Option<Loose<'a>>,
    pub target_id: Option<Loose<'a>>,
    pub label: Option<Loose<'a>>,
    pub name: Option<Loose<'a>>,
}

/// What parsing a line produced.
#[derive(Debug)]
pub enum ParsedLine<'a> {
    /// The line is a JSON object.
    Object(Box<LineFields<'a>>),
    /// Valid JSON, but not an object.
    NotObject,
}

/// Parses and validates one line (without its `\n`).
pub fn parse_line(line: &[u8]) -> Result<ParsedLine<'_>, JsonError> {
    Ok(match parse_fields(line)? {
        Some(fields) => ParsedLine::Object(Box::new(fields)),
        None => ParsedLine::NotObject,
    })
}

/// [`parse_line`] without the box (the scanner's hot path): `None` for valid JSON that is not
/// an object.
pub fn parse_fields(line: &[u8]) -> Result<Option<LineFields<'_>>, JsonError> {
    let mut cursor = Cursor::new(line);
    let mut fields = LineFields::default();
    let is_object = cursor.visit_object_raw(|key, cursor| {
        let slot = match key {
            b"type" => &mut fields.kind,
            b"id" => &mut fields.id,
            b"parentId" => &mut fields.parent_id,
            b"timestamp" => &mut fields.timestamp,
            b"version" => &mut fields.version,
            b"cwd" => &mut fields.cwd,
            b"parentSession" => &mut fields.parent_session,
            b"sessionId" => &mut fields.session_id,
            b"role" => &mut fields.role,
            b"model" => &mut fields.model,
            b"effort" => &mut fields.effort,
            b"firstKeptEntryId" => &mut fields.first_kept_entry_id,
            b"stripThinkingFromKept" => &mut fields.strip_thinking_from_kept,
            b"targetId" => &mut fields.target_id,
            b"label" => &mut fields.label,
            b"name" => &mut fields.name,
            b"message" => {
                fields.message = read_message(cursor)?;
                return Ok(true);
            }
            b"metadata" => {
                fields.metadata = read_metadata(cursor)?;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        *slot = Some(cursor.read_loose()?);
        Ok(true)
    })?;
    if !is_object {
        cursor.skip_value()?;
    }
    cursor.finish()?;
    Ok(is_object.then_some(fields))
}

fn read_message<'a>(cursor: &mut Cursor<'a>) -> Result<Option<MessageFields<'a>>, JsonError> {
    let mut message = MessageFields::default();
    let is_object = cursor.visit_object_raw(|key, cursor| {
        match key {
            b"role" => message.role = Some(cursor.read_loose()?),
            b"meta" => message.meta = read_meta(cursor)?,
            b"content" => message.content = read_content(cursor)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    if !is_object {
        cursor.skip_value()?;
    }
    Ok(is_object.then_some(message))
}

fn read_content(cursor: &mut Cursor<'_>) -> Result<ContentFacts, JsonError> {
    let mut facts = ContentFacts::default();
    if cursor.peek() == Some(b'"') {
        facts.has_text = cursor.read_blank_string()? == Some(false);
        return Ok(facts);
    }
    let is_array = cursor.visit_array(|cursor| {
        let (mut kind, mut text) = (None, None);
        let is_object = cursor.visit_object_raw(|key, cursor| {
            match key {
                b"type" => kind = Some(cursor.read_loose()?),
                // A text that is not a string still shows (as its repr): count it as text.
                b"text" => text = Some(cursor.read_blank_string()?.unwrap_or(false)),
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        if !is_object {
            return cursor.skip_value();
        }
        match kind.as_ref().and_then(Loose::as_str) {
            Some("tool_use" | "tool_result") => facts.has_tool = true,
            Some("text") if text == Some(false) => facts.has_text = true,
            _ => {}
        }
        Ok(())
    })?;
    if !is_array {
        cursor.skip_value()?;
    }
    Ok(facts)
}

fn read_meta<'a>(cursor: &mut Cursor<'a>) -> Result<Option<MetaFields<'a>>, JsonError> {
    let mut meta = MetaFields::default();
    let is_object = cursor.visit_object_raw(|key, cursor| {
        match key {
            b"isMeta" => meta.is_meta = Some(cursor.read_loose()?),
            b"messageId" => meta.message_id = Some(cursor.read_loose()?),
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    if !is_object {
        cursor.skip_value()?;
    }
    Ok(is_object.then_some(meta))
}

fn read_metadata<'a>(cursor: &mut Cursor<'a>) -> Result<Option<MetadataFields<'a>>, JsonError> {
    let mut metadata = MetadataFields::default();
    let is_object = cursor.visit_object_raw(|key, cursor| {
        match key {
            b"version" => metadata.version = Some(cursor.read_loose()?),
            b"entrypoint" => metadata.entrypoint = Some(cursor.read_loose()?),
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    if !is_object {
        cursor.skip_value()?;
    }
    Ok(is_object.then_some(metadata))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(line: &str) -> Box<LineFields<'_>> {
        match parse_line(line.as_bytes()).unwrap() {
            ParsedLine::Object(fields) => fields,
            ParsedLine::NotObject => panic!("not an object"),
        }
    }

    #[test]
    fn keeps_envelope_and_skips_payload() {
        let line = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"x\"y"}],"meta":{"isMeta":true,"messageId":"m"}}}"#;
        let parsed = fields(line);
        assert_eq!(parsed.kind.as_ref().unwrap().as_str(), Some("message"));
        assert_eq!(parsed.parent_id, Some(Loose::Null));
        let message = parsed.message.as_ref().unwrap();
        assert_eq!(message.role.as_ref().unwrap().as_str(), Some("user"));
        assert!(message.meta.as_ref().unwrap().is_meta.as_ref().unwrap().truthy());
    }

    #[test]
    fn last_duplicate_key_wins_like_javascript() {
        let parsed = fields(r#"{"id":"first","id":"second"}"#);
        assert_eq!(parsed.id.as_ref().unwrap().as_str(), Some("second"));
    }

    #[test]
    fn escaped_keys_and_values_are_decoded() {
        let parsed = fields(r#"{"\u0074ype":"lab\u0065l"}"#);
        assert_eq!(parsed.kind.as_ref().unwrap().as_str(), Some("label"));
    }

    #[test]
    fn non_objects_and_garbage_are_told_apart() {
        assert!(matches!(parse_line(b"[1,2]").unwrap(), ParsedLine::NotObject));
        assert!(matches!(parse_line(b"\"text\"").unwrap(), ParsedLine::NotObject));
        assert!(parse_line(b"{\"type\":").is_err());
        assert!(parse_line(b"{} trailing").is_err());
        assert!(parse_line(b"{}\r").is_ok());
    }

    fn content(json: &str) -> ContentFacts {
        let line = format!(r#"{{"type":"message","message":{{"role":"user","content":{json}}}}}"#);
        fields(&line).message.as_ref().unwrap().content
    }

    #[test]
    fn content_facts_tell_tool_traffic_from_text() {
        let tool_only = |json: &str| content(json).tool_only();
        assert!(tool_only(r#"[{"type":"tool_result","tool_use_id":"t","content":"big"}]"#));
        assert!(tool_only(r#"[{"type":"text","text":" \n\t"},{"type":"tool_use","name":"bash","input":{}}]"#));
        assert!(tool_only(r#"[{"type":"text","text":"\n\u00a0"},{"type":"tool_use"}]"#));
        assert!(tool_only(r#"[{"type":"text"},{"type":"tool_use"}, 3, "loose"]"#));
        assert!(!tool_only(r#"[{"type":"text","text":"hi"},{"type":"tool_use"}]"#));
        assert!(!tool_only(r#"[{"type":"text","text":"\u00e9"},{"type":"tool_use"}]"#));
        assert!(!tool_only(r#"[{"type":"text","text":"\"quoted\""},{"type":"tool_use"}]"#));
        assert!(!tool_only(r#"[{"type":"text","text":12},{"type":"tool_use"}]"#));
        assert!(!tool_only(r#"[{"text":"x","type":"thinking"}]"#));
        assert!(!tool_only(r#""a prompt""#));
        assert!(!tool_only(r#"{"type":"tool_use"}"#));
        assert_eq!(content(r#""   ""#), ContentFacts::default());
        assert!(content(r#"[{"type":"text","text":"a"}]"#).has_text);
        // The last `content` key wins, as in JavaScript.
        let line = r#"{"message":{"content":[{"type":"tool_use"}],"content":"text"}}"#;
        assert!(!fields(line).message.as_ref().unwrap().content.tool_only());
        assert!(parse_line(br#"{"message":{"content":[{"type":"text","text":"x"},]}}"#).is_err());
    }
}
