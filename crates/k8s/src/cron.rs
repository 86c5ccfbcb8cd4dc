//! A CronJob's schedule as kube-apiserver reads it: robfig/cron v3's standard parser
//! (five fields, minute to day of week, or a descriptor such as `@hourly`), which
//! `ValidateCronJobSpec` runs on every write. Only whether a schedule parses, and Go's
//! words when it does not: nothing here runs a schedule.

/// The bounds of a field and the names it takes (`jan`, `sun`).
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DAYS_OF_MONTH: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DAYS_OF_WEEK: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// Why `schedule` is not a schedule, in robfig/cron's words (`expected exactly 5 fields,
/// found 1: [hourly]`); `None` when it is one. A `TZ=` or `CRON_TZ=` prefix names a time
/// zone, checked as [`time_zone_error`] checks one.
pub fn schedule_error(schedule: &str) -> Option<String> {
    let mut spec = schedule;
    if spec.is_empty() {
        return Some("empty spec string".to_owned());
    }
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let (prefix, rest) = spec.split_once(' ').unwrap_or((spec, ""));
        let zone = &prefix[prefix.find('=').map_or(0, |i| i + 1)..];
        if let Some(why) = time_zone_error(zone) {
            return Some(format!("provided bad location {zone}: {why}"));
        }
        spec = rest.trim();
    }
    if spec.starts_with('@') {
        return descriptor_error(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    let bounds = [MINUTES, HOURS, DAYS_OF_MONTH, MONTHS, DAYS_OF_WEEK];
    (fields.iter().zip(&bounds)).find_map(|(field, bounds)| field_error(field, bounds))
}

/// Why `zone` is no time zone Go's `time.LoadLocation` loads (`unknown time zone
/// Mars/Olympus`), from the IANA database bundled in the binary (kube-apiserver embeds
/// Go's).
pub fn time_zone_error(zone: &str) -> Option<String> {
    if zone.is_empty() || zone == "UTC" || zone == "Local" {
        return None;
    }
    match jiff::tz::db().get(zone) {
        Ok(_) => None,
        Err(_) => Some(format!("unknown time zone {zone}")),
    }
}

/// `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, or
/// `@every` a Go duration.
fn descriptor_error(spec: &str) -> Option<String> {
    const DESCRIPTORS: [&str; 7] = [
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ];
    if DESCRIPTORS.contains(&spec) {
        return None;
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        return (!is_go_duration(duration)).then(|| {
            format!("failed to parse duration {spec}: time: invalid duration {duration:?}")
        });
    }
    Some(format!("unrecognized descriptor: {spec}"))
}

/// Whether `text` is a duration Go's `time.ParseDuration` reads: an optional sign, then
/// one or more decimal numbers each with a unit (`1h30m`, `1.5s`, `300ms`).
fn is_go_duration(text: &str) -> bool {
    let text = text.strip_prefix(['+', '-']).unwrap_or(text);
    if text == "0" {
        return true;
    }
    let mut rest = text;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let digits = &rest[..number];
        if digits.is_empty() || digits == "." || digits.matches('.').count() > 1 {
            return false;
        }
        rest = &rest[number..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        if !matches!(
            &rest[..unit],
            "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h"
        ) {
            return false;
        }
        rest = &rest[unit..];
    }
    true
}

/// One field: ranges separated by commas (robfig's `getField`).
fn field_error(field: &str, bounds: &Bounds) -> Option<String> {
    (field.split(',').filter(|range| !range.is_empty()))
        .find_map(|range| range_error(range, bounds))
}

/// One range: `*` or `?`, a number or name, or `low-high`, each with an optional
/// `/step` (robfig's `getRange`).
fn range_error(expr: &str, bounds: &Bounds) -> Option<String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = match low_and_high[0] {
        "*" | "?" => (bounds.min, bounds.max),
        low => {
            let start = match number_or_name(low, bounds) {
                Ok(start) => start,
                Err(why) => return Some(why),
            };
            match low_and_high.len() {
                1 => (start, start),
                2 => match number_or_name(low_and_high[1], bounds) {
                    Ok(end) => (start, end),
                    Err(why) => return Some(why),
                },
                _ => return Some(format!("too many hyphens: {expr}")),
            }
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = match number(range_and_step[1]) {
                Ok(step) => step,
                Err(why) => return Some(why),
            };
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Some(format!("too many slashes: {expr}")),
    };
    let (min, max) = (bounds.min, bounds.max);
    if start < min {
        return Some(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Some(format!(
            "end of range ({end}) above maximum ({max}): {expr}"
        ));
    }
    if start > end {
        return Some(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    (step == 0).then(|| format!("step of range should be a positive number: {expr}"))
}

fn number_or_name(expr: &str, bounds: &Bounds) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    match bounds.names.iter().find(|(name, _)| *name == lower) {
        Some((_, value)) => Ok(*value),
        None => number(expr),
    }
}

/// A whole number as Go's `strconv.Atoi` reads one, negative ones refused.
fn number(expr: &str) -> Result<u32, String> {
    let parsed: Result<i64, _> = expr.parse();
    match parsed {
        Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {expr}")),
        Ok(n) => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
        Err(_) => Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_kubectl_and_operators_write_parse() {
        for schedule in [
            "*/5 * * * *",
            "0 0 * * *",
            "30 2 1-15/2 jan,MAR sun-sat",
            "0 0 ? * MON",
            "@hourly",
            "@every 1h30m",
            "TZ=Europe/Paris 0 8 * * *",
            "CRON_TZ=UTC 0 8 * * *",
        ] {
            assert_eq!(schedule_error(schedule), None, "{schedule}");
        }
    }

    #[test]
    fn a_bad_schedule_is_refused_in_robfig_crons_words() {
        let cases = [
            ("", "empty spec string"),
            ("hourly", "expected exactly 5 fields, found 1: [hourly]"),
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("61 * * * *", "end of range (61) above maximum (59): 61"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-2 * * * *",
                "beginning of range (5) beyond end of range (2): 5-2",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("*/2/3 * * * *", "too many slashes: */2/3"),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                "* * * foo *",
                "failed to parse int from foo: strconv.Atoi: parsing \"foo\": invalid syntax",
            ),
            ("@fortnightly", "unrecognized descriptor: @fortnightly"),
            (
                "@every soon",
                "failed to parse duration @every soon: time: invalid duration \"soon\"",
            ),
            (
                "TZ=Mars/Olympus 0 8 * * *",
                "provided bad location Mars/Olympus: unknown time zone Mars/Olympus",
            ),
        ];
        for (schedule, why) in cases {
            assert_eq!(schedule_error(schedule).as_deref(), Some(why), "{schedule}");
        }
    }

    #[test]
    fn time_zones_are_those_of_the_iana_database() {
        assert_eq!(time_zone_error("America/New_York"), None);
        assert_eq!(time_zone_error("Etc/UTC"), None);
        assert_eq!(
            time_zone_error("Europe/Atlantis").as_deref(),
            Some("unknown time zone Europe/Atlantis")
        );
    }
}
