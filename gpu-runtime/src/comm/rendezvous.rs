//! How the processes of a group find each other: a rank's place from the environment a
//! launcher sets (torchrun's names), and the hand-over of the group's id from rank 0 to the
//! others, through a file or over TCP.
//!
//! The id is opaque bytes here (NCCL's unique id on CUDA), so the exchange is tested without
//! a GPU. Written by hand rather than taken from a crate: it is two small protocols over the
//! standard library, and a store crate would bring an async runtime for them.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::core::collective::CommError;
use crate::core::error::{Error, Result};

/// The environment variable with the group's timeout in seconds (default 300): how long a
/// collective on the CPU backend, or the rendezvous, waits for the other ranks.
pub const TIMEOUT_ENV: &str = "GPU_COMM_TIMEOUT";

/// The environment variable naming a rendezvous file ([`Rendezvous::File`]).
pub const ID_FILE_ENV: &str = "GPU_COMM_ID_FILE";

/// Marks our messages and files, so that a stray connection or file is an error, not an id.
const MAGIC: &[u8; 8] = b"GPUCOMM1";

/// How long rank 0 waits for a connected peer's hello before serving the next one.
const HELLO_WAIT: Duration = Duration::from_secs(10);

/// The longest id accepted (NCCL's is 128 bytes).
const MAX_ID: usize = 4096;

/// Where the ranks of a group started as separate processes meet to share its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rendezvous {
    /// A file that rank 0 creates (it must not exist yet) and the others wait for: on a file
    /// system every rank sees, and fresh for each run.
    File(PathBuf),
    /// Rank 0's `host:port`: rank 0 listens there and hands the id to each rank that connects.
    Tcp(String),
}

impl std::fmt::Display for Rendezvous {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rendezvous::File(path) => write!(f, "file {}", path.display()),
            Rendezvous::Tcp(address) => write!(f, "tcp://{address}"),
        }
    }
}

/// One process's place in a group, as a launcher (`scripts/launch`, torchrun) describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankEnv {
    /// This process's rank (`RANK`).
    pub rank: usize,
    /// Ranks in the group (`WORLD_SIZE`).
    pub world_size: usize,
    /// The rank among this host's processes (`LOCAL_RANK`, else `RANK`): the GPU to open.
    pub local_rank: usize,
    /// Where to meet: `GPU_COMM_ID_FILE`, else `MASTER_ADDR`:`MASTER_PORT`; `None` only for a
    /// group of one, which needs none.
    pub rendezvous: Option<Rendezvous>,
}

impl RankEnv {
    /// This process's place from `RANK`, `WORLD_SIZE`, `LOCAL_RANK` and the rendezvous
    /// variables; `None` when `WORLD_SIZE` is unset (the process was not started as a rank).
    pub fn from_env() -> Result<Option<RankEnv>> {
        RankEnv::parse(|name| std::env::var(name).ok())
    }

    /// [`RankEnv::from_env`] over any source of variables.
    pub(crate) fn parse(var: impl Fn(&str) -> Option<String>) -> Result<Option<RankEnv>> {
        let Some(world) = var("WORLD_SIZE") else {
            return Ok(None);
        };
        let number = |name: &'static str, value: &str| -> Result<usize> {
            value.trim().parse::<usize>().map_err(|_| {
                Error::Comm(CommError::BadEnv {
                    var: name,
                    value: value.to_string(),
                    reason: "must be a whole number".to_string(),
                })
            })
        };
        let world_size = number("WORLD_SIZE", &world)?;
        if world_size == 0 {
            return Err(CommError::Empty.into());
        }
        let rank = match var("RANK") {
            Some(value) => number("RANK", &value)?,
            None => {
                return Err(Error::Comm(CommError::BadEnv {
                    var: "RANK",
                    value: String::new(),
                    reason: "WORLD_SIZE is set, so RANK must be too (0..WORLD_SIZE); start the \
                             ranks with scripts/launch or torchrun"
                        .to_string(),
                }))
            }
        };
        if rank >= world_size {
            return Err(CommError::InvalidRank { rank, world_size }.into());
        }
        let local_rank = match var("LOCAL_RANK") {
            Some(value) => number("LOCAL_RANK", &value)?,
            None => rank,
        };
        let rendezvous = match (var(ID_FILE_ENV), var("MASTER_ADDR"), var("MASTER_PORT")) {
            (Some(path), _, _) if !path.is_empty() => Some(Rendezvous::File(path.into())),
            (_, Some(host), Some(port)) => {
                let port = number("MASTER_PORT", &port)?;
                Some(Rendezvous::Tcp(format!("{host}:{port}")))
            }
            _ if world_size == 1 => None,
            (_, host, _) => {
                return Err(Error::Comm(CommError::BadEnv {
                    var: if host.is_some() {
                        "MASTER_PORT"
                    } else {
                        "MASTER_ADDR"
                    },
                    value: String::new(),
                    reason: format!(
                        "a group of {world_size} needs a rendezvous: set MASTER_ADDR and \
                         MASTER_PORT (rank 0's host and a free port) or {ID_FILE_ENV} (a fresh \
                         file path every rank sees)"
                    ),
                }))
            }
        };
        Ok(Some(RankEnv {
            rank,
            world_size,
            local_rank,
            rendezvous,
        }))
    }
}

/// The group's timeout: `GPU_COMM_TIMEOUT` seconds, 300 by default.
pub fn timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|value| value.trim().parse::<u64>().ok())
        .filter(|&seconds| seconds > 0)
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(300))
}

impl Rendezvous {
    /// Rank 0 publishes the id `make_id` returns; every other rank receives it. Rank 0 over
    /// TCP returns once every rank has its copy; waits end after `timeout`.
    pub(crate) fn exchange(
        &self,
        rank: usize,
        world_size: usize,
        make_id: impl FnOnce() -> Result<Vec<u8>>,
        timeout: Duration,
    ) -> Result<Vec<u8>> {
        let deadline = Instant::now() + timeout;
        match (self, rank) {
            (Rendezvous::File(path), 0) => {
                let id = make_id()?;
                publish_file(path, world_size, &id)?;
                Ok(id)
            }
            (Rendezvous::File(path), _) => read_file(path, world_size, deadline, timeout),
            (Rendezvous::Tcp(address), 0) => {
                let id = make_id()?;
                serve(address, world_size, &id, deadline, timeout)?;
                Ok(id)
            }
            (Rendezvous::Tcp(address), _) => fetch(address, rank, world_size, deadline, timeout),
        }
    }
}

fn failed(at: impl std::fmt::Display, reason: impl Into<String>) -> Error {
    Error::Comm(CommError::Rendezvous {
        at: at.to_string(),
        reason: reason.into(),
    })
}

/// The file's bytes: magic, world size, id length, id.
fn file_bytes(world_size: usize, id: &[u8]) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&(world_size as u64).to_le_bytes());
    bytes.extend_from_slice(&(id.len() as u64).to_le_bytes());
    bytes.extend_from_slice(id);
    bytes
}

fn publish_file(path: &Path, world_size: usize, id: &[u8]) -> Result<()> {
    let at = || format!("file {}", path.display());
    if path.exists() {
        return Err(failed(
            at(),
            "it already exists (left by an earlier run?); remove it, or give each run a fresh \
             path as scripts/launch does",
        ));
    }
    // Written aside and renamed, so a reader sees the whole file or none.
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}.partial", std::process::id()));
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, file_bytes(world_size, id))
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|err| failed(at(), format!("cannot write it: {err}")))
}

fn read_file(
    path: &Path,
    world_size: usize,
    deadline: Instant,
    timeout: Duration,
) -> Result<Vec<u8>> {
    let at = format!("file {}", path.display());
    loop {
        match std::fs::read(path) {
            Ok(bytes) => {
                return parse_file(&bytes, world_size).map_err(|reason| failed(&at, reason))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(failed(&at, format!("cannot read it: {err}"))),
        }
        if Instant::now() >= deadline {
            return Err(CommError::Timeout {
                what: format!("the rendezvous through {at}"),
                seconds: timeout.as_secs(),
                missing: "[0]".to_string(),
            }
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn parse_file(bytes: &[u8], world_size: usize) -> std::result::Result<Vec<u8>, String> {
    let header = MAGIC.len() + 16;
    if bytes.len() < header || &bytes[..MAGIC.len()] != MAGIC {
        return Err("it is not a rendezvous file written by rank 0".to_string());
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    let (written_world, len) = (word(MAGIC.len()), word(MAGIC.len() + 8));
    if written_world != world_size as u64 {
        return Err(format!(
            "rank 0 started a group of {written_world}, this rank one of {world_size}"
        ));
    }
    if bytes.len() as u64 != header as u64 + len {
        return Err("it is truncated".to_string());
    }
    Ok(bytes[header..].to_vec())
}

/// A message of ours on the wire: magic, then the fields given.
fn send(stream: &mut TcpStream, fields: &[&[u8]]) -> std::io::Result<()> {
    let mut message = MAGIC.to_vec();
    for field in fields {
        message.extend_from_slice(field);
    }
    stream.write_all(&message)
}

fn read_u64(stream: &mut TcpStream) -> std::io::Result<u64> {
    let mut word = [0u8; 8];
    stream.read_exact(&mut word)?;
    Ok(u64::from_le_bytes(word))
}

/// Rank 0: listens on `address` and answers each of the other ranks' hellos with the id.
fn serve(
    address: &str,
    world_size: usize,
    id: &[u8],
    deadline: Instant,
    timeout: Duration,
) -> Result<()> {
    let at = format!("tcp://{address}");
    let listener = TcpListener::bind(address).map_err(|err| {
        failed(
            &at,
            format!(
                "rank 0 cannot listen there: {err}; is MASTER_ADDR this host and MASTER_PORT free?"
            ),
        )
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|err| failed(&at, err.to_string()))?;
    let mut joined = vec![false; world_size];
    joined[0] = true;
    while joined.iter().any(|&j| !j) {
        let now = Instant::now();
        if now >= deadline {
            let missing: Vec<usize> = (0..world_size).filter(|&r| !joined[r]).collect();
            return Err(CommError::Timeout {
                what: format!("the rendezvous at {at}"),
                seconds: timeout.as_secs(),
                missing: format!("{missing:?}"),
            }
            .into());
        }
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            Err(err) => return Err(failed(&at, format!("accepting a rank failed: {err}"))),
        };
        // A peer that connects and says nothing must not hold up the others past the deadline.
        let answered = stream
            .set_nonblocking(false)
            .and_then(|()| stream.set_read_timeout(Some(HELLO_WAIT.min(deadline - now))))
            .and_then(|()| greet(&mut stream, world_size, &mut joined, id));
        // A bad hello was answered with the reason; a broken connection is the peer's to report.
        let _ = answered;
    }
    Ok(())
}

/// Reads one rank's hello and answers it: the id, or why it cannot join.
fn greet(
    stream: &mut TcpStream,
    world_size: usize,
    joined: &mut [bool],
    id: &[u8],
) -> std::io::Result<()> {
    let mut magic = [0u8; 8];
    stream.read_exact(&mut magic)?;
    let (rank, world) = (read_u64(stream)?, read_u64(stream)?);
    let refusal = if &magic != MAGIC {
        Some("this is not a rank of ours".to_string())
    } else if world != world_size as u64 {
        Some(format!(
            "rank 0 started a group of {world_size}, this rank one of {world}"
        ))
    } else if rank == 0 || rank >= world_size as u64 {
        Some(format!("rank {rank} is not a rank 1..{world_size}"))
    } else if joined[rank as usize] {
        Some(format!(
            "rank {rank} has already joined: two processes have RANK={rank}"
        ))
    } else {
        None
    };
    match refusal {
        Some(reason) => send(
            stream,
            &[
                &[1],
                &(reason.len() as u64).to_le_bytes(),
                reason.as_bytes(),
            ],
        ),
        None => {
            send(stream, &[&[0], &(id.len() as u64).to_le_bytes(), id])?;
            joined[rank as usize] = true;
            Ok(())
        }
    }
}

/// Ranks above 0: connects to rank 0 (retrying until it listens) and receives the id.
fn fetch(
    address: &str,
    rank: usize,
    world_size: usize,
    deadline: Instant,
    timeout: Duration,
) -> Result<Vec<u8>> {
    let at = format!("tcp://{address}");
    let targets: Vec<_> = address
        .to_socket_addrs()
        .map_err(|err| failed(&at, format!("cannot resolve it: {err}")))?
        .collect();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(CommError::Timeout {
                what: format!("the rendezvous at {at}"),
                seconds: timeout.as_secs(),
                missing: "[0]".to_string(),
            }
            .into());
        }
        let connected = targets
            .iter()
            .find_map(|target| TcpStream::connect_timeout(target, Duration::from_secs(1)).ok());
        let Some(mut stream) = connected else {
            // Rank 0 may not be listening yet.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let exchanged = (|| -> std::io::Result<std::result::Result<Vec<u8>, String>> {
            stream.set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))))?;
            send(
                &mut stream,
                &[
                    &(rank as u64).to_le_bytes(),
                    &(world_size as u64).to_le_bytes(),
                ],
            )?;
            let mut magic = [0u8; 8];
            stream.read_exact(&mut magic)?;
            let mut status = [0u8; 1];
            stream.read_exact(&mut status)?;
            let len = read_u64(&mut stream)?;
            if &magic != MAGIC || len as usize > MAX_ID {
                return Ok(Err(
                    "the listener there is not rank 0 of a group of ours".to_string()
                ));
            }
            let mut body = vec![0u8; len as usize];
            stream.read_exact(&mut body)?;
            Ok(match status[0] {
                0 => Ok(body),
                _ => Err(format!(
                    "rank 0 refused this rank: {}",
                    String::from_utf8_lossy(&body)
                )),
            })
        })();
        match exchanged {
            Ok(Ok(id)) => return Ok(id),
            Ok(Err(reason)) => return Err(failed(&at, reason)),
            // A connection cut short (rank 0 restarting, a stray listener): try again.
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[cfg(test)]
mod tests;
