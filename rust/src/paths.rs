//! Path sanitizing, as the real CLI does for what it shares: an absolute path inside the project
//! becomes `./rel` (the project itself `.`), one in the home folder `~/rel`, one in another
//! user's home (`/home/<user>` or `/Users/<user>`) `<user-home>/rel`, any other
//! `<system-path>/<basename>`.
//!
//! In a text, a path is a `/` that starts a word (at the start, or after whitespace, a quote, a
//! bracket, `=`, `:`, `,`, `;` or `|`) followed by a path character, and the path characters
//! after it (`A-Za-z0-9._@%+~-/`); full stops at its end are left out. So `https://host/a`,
//! `1/2`, `src/a.py`, `// comment` and `/* comment */` are left alone, and so is a closing tag
//! (`</system-reminder>`: a `/` after `<` with no second `/` before the path ends).

/// A folder to rewrite paths against: absolute, without a trailing `/`, not `/` itself.
fn folder(path: Option<&str>) -> Option<&str> {
    let path = path?.trim_end_matches('/');
    (path.starts_with('/') && !path.is_empty()).then_some(path)
}

fn is_path_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'@' | b'%' | b'+' | b'~' | b'-' | b'/')
}

fn starts_word(byte: u8) -> bool {
    byte.is_ascii_whitespace()
        || matches!(byte, b'"' | b'\'' | b'`' | b'(' | b'[' | b'{' | b'<' | b'=' | b':' | b',' | b';' | b'|')
}

/// One absolute path, sanitized against `project` and `home`.
#[must_use]
pub fn sanitize_path(path: &str, project: Option<&str>, home: Option<&str>) -> String {
    let trailing = if path.len() > 1 && path.ends_with('/') { "/" } else { "" };
    let bare = path.trim_end_matches('/');
    let bare = if bare.is_empty() { "/" } else { bare };
    for (base, prefix) in [(folder(project), "."), (folder(home), "~")] {
        let Some(base) = base else { continue };
        if bare == base {
            return format!("{prefix}{trailing}");
        }
        if let Some(rest) = bare.strip_prefix(base).and_then(|rest| rest.strip_prefix('/')) {
            return format!("{prefix}/{rest}{trailing}");
        }
    }
    for homes in ["/home/", "/Users/"] {
        if let Some(rest) = bare.strip_prefix(homes) {
            if !rest.is_empty() {
                let tail = rest.find('/').map_or("", |slash| &rest[slash..]);
                return format!("<user-home>{tail}{trailing}");
            }
        }
    }
    let basename = bare.rsplit('/').next().unwrap_or("");
    format!("<system-path>/{basename}{trailing}")
}

/// `text` with every absolute path sanitized, or `None` when it has none.
#[must_use]
pub fn sanitize_text(text: &str, project: Option<&str>, home: Option<&str>) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut cursor = 0;
    while let Some(found) = memchr::memchr(b'/', &bytes[cursor..]) {
        let start = cursor + found;
        cursor = start + 1;
        if start > 0 && !starts_word(bytes[start - 1]) {
            continue;
        }
        let Some(&first) = bytes.get(start + 1) else { break };
        if first == b'/' || !is_path_byte(first) {
            continue;
        }
        let mut end = start + 1;
        while end < bytes.len() && is_path_byte(bytes[end]) {
            end += 1;
        }
        while end > start + 1 && bytes[end - 1] == b'.' {
            end -= 1;
        }
        cursor = end.max(start + 1);
        if start > 0 && bytes[start - 1] == b'<' && !bytes[start + 1..end].contains(&b'/') {
            continue; // a closing tag, `</name>`, not a path
        }
        let replaced = sanitize_path(&text[start..end], project, home);
        let buffer = out.get_or_insert_with(|| String::with_capacity(text.len()));
        buffer.push_str(&text[copied..start]);
        buffer.push_str(&replaced);
        copied = end;
    }
    out.map(|mut buffer| {
        buffer.push_str(&text[copied..]);
        buffer
    })
}

#[cfg(test)]
mod tests {
    use super::{sanitize_path, sanitize_text};

    const PROJECT: Option<&str> = Some("/home/dev/proj");
    const HOME: Option<&str> = Some("/home/dev");

    fn text(input: &str) -> String {
        sanitize_text(input, PROJECT, HOME).unwrap_or_else(|| input.to_owned())
    }

    #[test]
    fn paths_by_where_they_are() {
        assert_eq!(sanitize_path("/home/dev/proj/a/b.txt", PROJECT, HOME), "./a/b.txt");
        assert_eq!(sanitize_path("/home/dev/proj", PROJECT, HOME), ".");
        assert_eq!(sanitize_path("/home/dev/notes/x.md", PROJECT, HOME), "~/notes/x.md");
        assert_eq!(sanitize_path("/home/eve/secret/x", PROJECT, HOME), "<user-home>/secret/x");
        assert_eq!(sanitize_path("/usr/lib/python3/os.py", PROJECT, HOME), "<system-path>/os.py");
        assert_eq!(sanitize_path("/home/dev/projector/a", PROJECT, HOME), "~/projector/a");
    }

    #[test]
    fn texts_keep_what_is_not_an_absolute_path() {
        assert_eq!(text("at: /home/dev/proj/new.txt."), "at: ./new.txt.");
        assert_eq!(
            text("see https://example.com/a/b and 1/2 and src/a.py"),
            "see https://example.com/a/b and 1/2 and src/a.py"
        );
        assert_eq!(text("x // comment /* c */"), "x // comment /* c */");
        assert_eq!(text("PATH=/usr/bin:/bin"), "PATH=<system-path>/bin:<system-path>/bin");
        assert_eq!(sanitize_text("no paths here", PROJECT, HOME), None);
    }

    #[test]
    fn closing_tags_are_not_paths() {
        assert_eq!(sanitize_text("<system-reminder>x</system-reminder>", PROJECT, HOME), None);
        assert_eq!(text("<a> /home/dev/proj/b.txt</a>"), "<a> ./b.txt</a>");
        assert_eq!(text("</usr/lib/os.py>"), "<<system-path>/os.py>");
    }
}
