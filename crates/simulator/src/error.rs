//! What can stop a Simulator command ([`SimulatorError`]), and what fails a single operation
//! during a measurement ([`OperationError`]): the latter does not stop anything, it is counted
//! in the results.

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

/// Why an operation failed; counted, not fatal.
#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A read found no value for a key the test wrote.
    #[error("no value for a key that was loaded")]
    MissingKey,
    /// A scan's answer did not start at its start key, which the test wrote.
    #[error("a scan did not start at its start key (the first of {found} entries was another)")]
    ScanStart { found: usize },
    #[error(transparent)]
    Queue(#[from] QueueError),
}

/// Why a queue operation failed, besides the client's errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    #[error("offer refused: the queue is full")]
    Full,
    #[error("polled an item this test did not offer")]
    Foreign,
}
