//! The CSV files loam writes: a header line, then one record per line, comma separated, no
//! quoting (loam never writes a comma inside a field). Errors name the file, the line and the
//! column.

use std::path::{Path, PathBuf};

use super::PlotError;

/// A CSV file held as text; columns are parsed on request, so a bad number is reported with
/// the line it is on.
pub struct Table {
    pub path: PathBuf,
    header: Vec<String>,
    /// Each record with the line number (1-based) it came from.
    records: Vec<(usize, Vec<String>)>,
}

impl Table {
    pub fn read(path: &Path) -> Result<Table, PlotError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlotError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Table::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Table, PlotError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line.trim_end_matches('\r')))
            .filter(|(_, line)| !line.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            return Err(PlotError::Empty {
                path: path.to_path_buf(),
            });
        };
        let header = fields_of(header);
        let mut records = Vec::new();
        for (line, record) in lines {
            let fields = fields_of(record);
            if fields.len() != header.len() {
                return Err(PlotError::Csv {
                    path: path.to_path_buf(),
                    line,
                    message: format!(
                        "{} fields where the header has {} ({})",
                        fields.len(),
                        header.len(),
                        header.join(",")
                    ),
                });
            }
            records.push((line, fields));
        }
        if records.is_empty() {
            return Err(PlotError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Table {
            path: path.to_path_buf(),
            header,
            records,
        })
    }

    /// The header's column names, in order.
    pub fn columns(&self) -> &[String] {
        &self.header
    }

    /// A sweep table's varied fields: its columns before `run`.
    pub fn varied(&self) -> Vec<String> {
        self.header
            .iter()
            .take_while(|c| *c != "run")
            .cloned()
            .collect()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn has(&self, column: &str) -> bool {
        self.header.iter().any(|c| c == column)
    }

    fn index(&self, column: &str) -> Result<usize, PlotError> {
        self.header
            .iter()
            .position(|c| c == column)
            .ok_or_else(|| PlotError::MissingColumn {
                path: self.path.clone(),
                column: column.to_string(),
                found: self.header.join(","),
            })
    }

    /// A column of finite numbers.
    pub fn numbers(&self, column: &str) -> Result<Vec<f64>, PlotError> {
        let j = self.index(column)?;
        self.records
            .iter()
            .map(|(line, fields)| {
                let text = &fields[j];
                match text.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => Err(PlotError::Csv {
                        path: self.path.clone(),
                        line: *line,
                        message: format!("column {column}: `{text}` is not a finite number"),
                    }),
                }
            })
            .collect()
    }

    /// A column of finite numbers that never decreases (a time), naming the first line that
    /// goes back.
    pub fn nondecreasing(&self, column: &str) -> Result<Vec<f64>, PlotError> {
        let values = self.numbers(column)?;
        if let Some(i) = (1..values.len()).find(|&i| values[i] < values[i - 1]) {
            return Err(PlotError::Csv {
                path: self.path.clone(),
                line: self.records[i].0,
                message: format!(
                    "column {column}: {} after {} (it must not decrease)",
                    values[i],
                    values[i - 1]
                ),
            });
        }
        Ok(values)
    }

    /// A column of numbers that may be left empty (or `nan`) where there is no value.
    pub fn optional_numbers(&self, column: &str) -> Result<Vec<Option<f64>>, PlotError> {
        let j = self.index(column)?;
        self.records
            .iter()
            .map(|(line, fields)| {
                let text = &fields[j];
                if text.is_empty() || text.eq_ignore_ascii_case("nan") {
                    return Ok(None);
                }
                match text.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(Some(v)),
                    _ => Err(PlotError::Csv {
                        path: self.path.clone(),
                        line: *line,
                        message: format!(
                            "column {column}: `{text}` is neither a finite number nor empty"
                        ),
                    }),
                }
            })
            .collect()
    }

    /// A column of text.
    pub fn text(&self, column: &str) -> Result<Vec<&str>, PlotError> {
        let j = self.index(column)?;
        Ok(self.records.iter().map(|(_, f)| f[j].as_str()).collect())
    }

    /// A column that must hold one of `accepted`.
    pub fn choices(&self, column: &str, accepted: &[&str]) -> Result<Vec<&str>, PlotError> {
        let j = self.index(column)?;
        self.records
            .iter()
            .map(|(line, fields)| {
                let text = fields[j].as_str();
                if accepted.contains(&text) {
                    Ok(text)
                } else {
                    Err(PlotError::Csv {
                        path: self.path.clone(),
                        line: *line,
                        message: format!(
                            "column {column}: `{text}` is not one of {}",
                            accepted.join(", ")
                        ),
                    })
                }
            })
            .collect()
    }

    /// A column of `true`/`false`.
    pub fn booleans(&self, column: &str) -> Result<Vec<bool>, PlotError> {
        Ok(self
            .choices(column, &["true", "false"])?
            .into_iter()
            .map(|t| t == "true")
            .collect())
    }

    /// The line (1-based) record `i` came from.
    pub fn line(&self, i: usize) -> usize {
        self.records[i].0
    }
}

/// One CSV record's fields: split at commas outside double quotes; a quoted field loses its
/// quotes, and `""` inside it is one quote (a sweep's varied section, `"{model: rigid}"`).
pub fn fields_of(record: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = record.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field).trim().to_string()),
            c => field.push(c),
        }
    }
    fields.push(field.trim().to_string());
    fields
}

#[cfg(test)]
mod csv_tests {
    use super::fields_of;
    use crate::output::csv_field;

    #[test]
    fn a_quoted_field_keeps_its_commas_and_quotes() {
        let value = "{model: added_mass, medium: \"poppy\"}";
        let record = format!("0.03,{},x", csv_field(value));
        assert_eq!(fields_of(&record), ["0.03", value, "x"]);
        assert_eq!(csv_field("plain"), "plain");
    }
}
