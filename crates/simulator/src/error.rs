//! What can stop a Simulator command. Errors of single operations during a measurement are
//! not among them: those are counted in the results.

use std::path::PathBuf;

use ferrogrid_client::ClientError;

#[derive(Debug, thiserror::Error)]
pub enum SimulatorError {
    /// A test file, workload file or command-line option is wrong; the message names it.
    #[error("{0}")]
    Input(String),
    /// Starting, checking or stopping members failed.
    #[error("cluster: {0}")]
    Cluster(String),
    /// The loaded data set is not all there (load phase check).
    #[error("load verification failed: {0}")]
    Verification(String),
    /// A run's end-of-run check failed (a queue test's counts do not add up); its
    /// `result.json` is written.
    #[error("end-of-run check failed: {0}")]
    Check(String),
    /// Connecting, loading or another step outside the measurement failed.
    #[error("client: {0}")]
    Client(#[from] ClientError),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// Something failed for one tenant of a `tenants` run.
    #[error("tenant {tenant}: {source}")]
    Tenant { tenant: String, source: Box<SimulatorError> },
    /// A process of a `scaling` step failed.
    #[error("scaling: {0}")]
    Scaling(String),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

impl SimulatorError {
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SimulatorError {
        let path = path.into();
        move |source| SimulatorError::Io { path, source }
    }
}
