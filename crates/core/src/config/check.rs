//! Checking spanned values of one file: each bad value becomes a problem at its position, and
//! checking goes on so that all of them are reported.

use std::ops::Range;

use serde_spanned::Spanned;

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::values::{self, Choice, Invalid};

pub struct Checker<'a, 'f> {
    pub file: &'f SourceFile,
    problems: &'a mut Problems,
}

impl<'a, 'f> Checker<'a, 'f> {
    pub fn new(file: &'f SourceFile, problems: &'a mut Problems) -> Self {
        Checker { file, problems }
    }

    pub fn report(&mut self, span: Range<usize>, invalid: Invalid) {
        let problem = Problem::at(self.file, span, invalid.message);
        self.push(match invalid.help {
            Some(help) => problem.with_help(help),
            None => problem,
        });
    }

    pub fn push(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// The parsed value, or `None` after reporting why it is invalid.
    pub fn text<T>(
        &mut self,
        raw: &Spanned<String>,
        parse: impl FnOnce(&str) -> Result<T, Invalid>,
    ) -> Option<T> {
        parse(raw.get_ref())
            .map_err(|invalid| self.report(raw.span(), invalid))
            .ok()
    }

    /// Every valid value of a list; each invalid one is reported.
    pub fn texts<T>(
        &mut self,
        raw: &[Spanned<String>],
        parse: impl Fn(&str) -> Result<T, Invalid>,
    ) -> Vec<T> {
        raw.iter()
            .filter_map(|item| self.text(item, &parse))
            .collect()
    }

    /// The chosen word, or `default` when absent (or invalid, after reporting it).
    pub fn choice<T: Choice>(&mut self, raw: &Option<Spanned<String>>, default: T) -> T {
        raw.as_ref()
            .and_then(|raw| self.text(raw, values::choice))
            .unwrap_or(default)
    }

    pub fn port(&mut self, raw: &Spanned<i64>) -> Option<u16> {
        self.number(raw, values::port)
    }

    /// The checked number, or `None` after reporting why it is invalid.
    pub fn number<T>(
        &mut self,
        raw: &Spanned<i64>,
        check: impl FnOnce(i64) -> Result<T, Invalid>,
    ) -> Option<T> {
        check(*raw.get_ref())
            .map_err(|invalid| self.report(raw.span(), invalid))
            .ok()
    }
}
