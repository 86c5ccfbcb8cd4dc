//! A run split across machines: `run --shard I/N` runs a deterministic share of the run's
//! jobs (each variant at each sweep point is one job, in its own process) and writes a
//! shard report; [`merge`] joins the N shards into the report the whole run writes. Jobs
//! are dealt round-robin (job `point * variants + variant` goes to shard
//! `job % N + 1`), so every shard gets a share of every point and of every variant, and
//! each job's exact figures are its own process's: a merged report's equal a whole run's.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{Report, VariantReport, fit};

/// Which share of a run a report holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This shard, from 1.
    pub index: u32,
    /// Of how many.
    pub count: u32,
    /// The build that ran it: the SHA-1 of the `informer-mem` executable. Exact figures
    /// are comparable within one build, so shards of different builds do not merge.
    pub build: String,
    /// The whole run's jobs: variants times sweep points.
    pub of_jobs: u64,
    /// The jobs this shard ran, one per entry of the report's `variants`, in order.
    pub jobs: Vec<u64>,
}

/// `run --shard I/N` as typed: shard I (from 1) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardArg {
    index: u32,
    count: u32,
}

impl ShardArg {
    /// This shard, from 1.
    pub fn index(self) -> u32 {
        self.index
    }

    /// Of how many.
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether job `job` of the run is this shard's.
    pub fn takes(self, job: u64) -> bool {
        job % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl FromStr for ShardArg {
    type Err = String;

    fn from_str(text: &str) -> Result<ShardArg, String> {
        let wrong = || format!("`{text}` is not a shard: give I/N, as 1/3, with 1 <= I <= N");
        let (index, count) = text.split_once('/').ok_or_else(wrong)?;
        let index: u32 = index.trim().parse().map_err(|_| wrong())?;
        let count: u32 = count.trim().parse().map_err(|_| wrong())?;
        if index == 0 || index > count {
            return Err(wrong());
        }
        Ok(ShardArg { index, count })
    }
}

impl fmt::Display for ShardArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why shards did not merge; each names the files at fault.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("merge needs the shard reports of one run (`run --shard I/N`), one file each")]
    Nothing,
    /// A report of a whole run, not of a shard.
    #[error("`{}` is not a shard: it was written by a run without --shard", .0.display())]
    NotAShard(PathBuf),
    /// Two shards of different runs.
    #[error(
        "`{}` and `{}` are shards of different runs: {what} differ",
        first.display(),
        other.display()
    )]
    Different {
        first: PathBuf,
        other: PathBuf,
        what: &'static str,
    },
    /// The same share given twice.
    #[error("`{}` and `{}` are both shard {index}: each shard once", first.display(), other.display())]
    Overlap {
        first: PathBuf,
        other: PathBuf,
        index: u32,
    },
    /// A share not given.
    #[error("shard {index}/{count} is missing: merge takes every shard of the run")]
    Missing { index: u32, count: u32 },
    /// A shard whose jobs are not the ones its place deals it.
    #[error("`{}` does not hold the jobs shard {index} of {count} runs: it was edited or cut", .path.display())]
    Jobs {
        path: PathBuf,
        index: u32,
        count: u32,
    },
}

/// The shard report of `point_reports` (each sweep point's report of the variants this
/// shard ran, `None` where it ran none there): the variants named and marked for their
/// point as a sweep's report has them, without fits (they need every point).
pub fn shard_report(
    point_reports: Vec<Option<Report>>,
    shard: Shard,
    sweep: Option<&scenario::Sweep>,
) -> Option<Report> {
    let mut variants = Vec::new();
    let mut first = None;
    for (point, report) in point_reports.into_iter().enumerate() {
        let Some(report) = report else { continue };
        let named = report.variants.iter().cloned().map(|variant| match sweep {
            Some(sweep) => fit::at_point(sweep, sweep.values[point], variant),
            None => variant,
        });
        variants.extend(named);
        first.get_or_insert(report);
    }
    let mut report = first?;
    report.variants = variants;
    report.fits = Vec::new();
    report.shard = Some(shard);
    Some(report)
}

/// Joins the shard reports of one run into the report the whole run writes: the variants
/// in the run's order and, for a sweep, the fits through every point. Refuses reports
/// that are not shards, shards of different scenarios, builds, tools or counts, a shard
/// given twice and a shard missing. A real server's details are the first shard's.
pub fn merge(shards: Vec<(PathBuf, Report)>) -> Result<Report, MergeError> {
    let mut placed: Vec<(PathBuf, Report, Shard)> = Vec::new();
    for (path, mut report) in shards {
        let shard = report
            .shard
            .take()
            .ok_or_else(|| MergeError::NotAShard(path.clone()))?;
        if let Some((first, head, head_shard)) = placed.first() {
            let what = different(head, head_shard, &report, &shard);
            if let Some(what) = what {
                return Err(MergeError::Different {
                    first: first.clone(),
                    other: path,
                    what,
                });
            }
        }
        if let Some((first, ..)) = placed.iter().find(|(.., s)| s.index == shard.index) {
            return Err(MergeError::Overlap {
                first: first.clone(),
                other: path,
                index: shard.index,
            });
        }
        if shard.jobs.len() != report.variants.len() || !dealt(&shard) {
            return Err(MergeError::Jobs {
                path,
                index: shard.index,
                count: shard.count,
            });
        }
        placed.push((path, report, shard));
    }
    let count = placed.first().ok_or(MergeError::Nothing)?.2.count;
    if let Some(index) = (1..=count).find(|i| !placed.iter().any(|(.., s)| s.index == *i)) {
        return Err(MergeError::Missing { index, count });
    }
    Ok(joined(placed))
}

/// What two shards' reports differ in, of what one run's shards share.
fn different(a: &Report, a_shard: &Shard, b: &Report, b_shard: &Shard) -> Option<&'static str> {
    if a.scenario != b.scenario {
        Some("their scenarios")
    } else if a.tool != b.tool || a.format_version != b.format_version {
        Some("their tools")
    } else if a_shard.build != b_shard.build {
        Some("their builds (run every shard with one informer-mem executable)")
    } else if a_shard.count != b_shard.count || a_shard.of_jobs != b_shard.of_jobs {
        Some("their shard counts")
    } else {
        None
    }
}

/// Whether `shard` holds exactly the jobs its place deals it.
fn dealt(shard: &Shard) -> bool {
    let place = ShardArg {
        index: shard.index,
        count: shard.count,
    };
    let expected = (0..shard.of_jobs).filter(|job| place.takes(*job));
    shard.jobs.iter().copied().eq(expected)
}

/// The whole run's report of every shard, each checked.
fn joined(placed: Vec<(PathBuf, Report, Shard)>) -> Report {
    let mut jobs: Vec<(u64, VariantReport)> = Vec::new();
    let mut head: Option<Report> = None;
    for (_, mut report, shard) in placed {
        let variants = std::mem::take(&mut report.variants);
        jobs.extend(shard.jobs.into_iter().zip(variants));
        if head.is_none() || shard.index == 1 {
            head = Some(report);
        }
    }
    jobs.sort_by_key(|(job, _)| *job);
    let mut report = head.expect("merge checked there is a shard");
    let variants: Vec<VariantReport> = jobs.into_iter().map(|(_, v)| v).collect();
    let Some(sweep) = report.scenario.sweep.clone() else {
        report.variants = variants;
        return report;
    };
    let per_point = variants.len() / sweep.values.len().max(1);
    let mut points = Vec::new();
    let mut variants = variants.into_iter();
    for value in &sweep.values {
        let mut point = report.clone();
        point.variants = (variants.by_ref().take(per_point))
            .map(|v| fit::off_point(&sweep, *value, v))
            .collect();
        points.push((*value, point));
    }
    let scenario = report.scenario.clone();
    let mut merged = fit::merge(&sweep, points);
    merged.scenario = scenario;
    merged
}

/// Where shard `shard` of a run whose report goes to `report` writes its own.
pub fn shard_file(report: &Path, shard: ShardArg) -> PathBuf {
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy());
    report.with_file_name(format!(
        "{stem}.shard-{}-of-{}.json",
        shard.index, shard.count
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_i_of_n_with_i_from_1_to_n() {
        let place: ShardArg = "2/3".parse().unwrap();
        assert_eq!((place.index(), place.count()), (2, 3));
        assert_eq!(place.to_string(), "2/3");
        for wrong in ["0/3", "4/3", "1/0", "3", "a/b", "1/3/4", "-1/3", ""] {
            let refused = wrong.parse::<ShardArg>().unwrap_err();
            assert!(refused.contains("give I/N"), "{wrong}: {refused}");
        }
    }

    #[test]
    fn every_job_goes_to_exactly_one_shard_round_robin() {
        for count in 1..=5u32 {
            let places: Vec<ShardArg> = (1..=count)
                .map(|i| format!("{i}/{count}").parse().unwrap())
                .collect();
            for job in 0..23u64 {
                let takers: Vec<u32> = (places.iter())
                    .filter(|p| p.takes(job))
                    .map(|p| p.index())
                    .collect();
                assert_eq!(
                    takers,
                    [(job % u64::from(count)) as u32 + 1],
                    "{job} of {count}"
                );
            }
        }
    }

    #[test]
    fn a_shard_whose_jobs_were_edited_is_not_dealt() {
        let shard = |jobs: Vec<u64>| Shard {
            index: 2,
            count: 3,
            build: "b".to_owned(),
            of_jobs: 7,
            jobs,
        };
        assert!(dealt(&shard(vec![1, 4])));
        assert!(!dealt(&shard(vec![1])));
        assert!(!dealt(&shard(vec![1, 4, 5])));
        assert!(!dealt(&shard(vec![0, 3, 6])));
    }
}
