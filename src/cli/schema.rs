//! `loam schema problem|robot`: the JSON Schema of a file format, for editors to validate and
//! complete files with; `--markdown`: the field reference (docs/SCHEMA.md).

use loam::problem::json_schema::{self, FileKind};

#[derive(clap::Args)]
pub struct Args {
    /// Which file format: `problem` or `robot`.
    #[arg(value_enum, required_unless_present = "markdown")]
    pub kind: Option<Kind>,
    /// Print the field reference in Markdown instead (docs/SCHEMA.md, both formats; with a
    /// KIND, that format's part).
    #[arg(long)]
    pub markdown: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Kind {
    /// A problem file (`problems/*.yaml`).
    Problem,
    /// A robot file (`robots/*.yaml`).
    Robot,
}

impl From<Kind> for FileKind {
    fn from(kind: Kind) -> FileKind {
        match kind {
            Kind::Problem => FileKind::Problem,
            Kind::Robot => FileKind::Robot,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let text = match (args.markdown, args.kind) {
        (true, None) => json_schema::markdown(),
        (true, Some(kind)) => json_schema::markdown_of(kind.into()),
        (false, Some(kind)) => {
            let mut text = serde_json::to_string_pretty(&json_schema::schema(kind.into()))?;
            text.push('\n');
            text
        }
        (false, None) => unreachable!("clap requires KIND without --markdown"),
    };
    print!("{text}");
    Ok(0)
}
