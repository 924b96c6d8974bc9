//! The launch environment and the id exchange, with threads standing in for processes.

use std::collections::HashMap;

use super::*;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn the_environment_names_the_rank_and_the_rendezvous() {
    assert_eq!(RankEnv::parse(env(&[])).unwrap(), None);
    let tcp = RankEnv::parse(env(&[
        ("WORLD_SIZE", "4"),
        ("RANK", "3"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "10.1.2.3"),
        ("MASTER_PORT", "29500"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(
        tcp,
        RankEnv {
            rank: 3,
            world_size: 4,
            local_rank: 1,
            rendezvous: Some(Rendezvous::Tcp("10.1.2.3:29500".into()))
        }
    );
    let file = RankEnv::parse(env(&[
        ("WORLD_SIZE", "2"),
        ("RANK", "1"),
        (ID_FILE_ENV, "/tmp/run/id"),
        ("MASTER_ADDR", "h"),
        ("MASTER_PORT", "1"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(file.local_rank, 1);
    assert_eq!(
        file.rendezvous,
        Some(Rendezvous::File("/tmp/run/id".into()))
    );
    let alone = RankEnv::parse(env(&[("WORLD_SIZE", "1"), ("RANK", "0")]))
        .unwrap()
        .unwrap();
    assert_eq!(alone.rendezvous, None);
}

#[test]
fn a_bad_environment_says_what_to_set() {
    let error = |pairs: &[(&str, &str)]| RankEnv::parse(env(pairs)).unwrap_err().to_string();
    assert!(error(&[("WORLD_SIZE", "2")]).contains("RANK must be too"));
    assert!(error(&[("WORLD_SIZE", "two"), ("RANK", "0")]).contains("whole number"));
    assert!(error(&[("WORLD_SIZE", "2"), ("RANK", "2")]).contains("rank 2 is not in a group of 2"));
    assert!(error(&[("WORLD_SIZE", "0"), ("RANK", "0")]).contains("at least one rank"));
    let no_rendezvous = error(&[("WORLD_SIZE", "2"), ("RANK", "0")]);
    assert!(no_rendezvous.contains("MASTER_ADDR"), "{no_rendezvous}");
    assert!(
        error(&[("WORLD_SIZE", "2"), ("RANK", "0"), ("MASTER_ADDR", "h")])
            .starts_with("MASTER_PORT")
    );
}

/// Runs the exchange on `world_size` threads; rank 0 makes `id`.
fn exchange_on_threads(
    rendezvous: &Rendezvous,
    world_size: usize,
    worlds: impl Fn(usize) -> usize + Sync,
    id: &[u8],
) -> Vec<Result<Vec<u8>>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..world_size)
            .map(|rank| {
                let worlds = &worlds;
                scope.spawn(move || {
                    rendezvous.exchange(
                        rank,
                        worlds(rank),
                        || Ok(id.to_vec()),
                        Duration::from_secs(10),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap()
}

#[test]
fn every_rank_gets_rank_0s_id_over_tcp_and_through_a_file() {
    let id: Vec<u8> = (0..128).map(|i| (i * 37 % 251) as u8).collect();
    let dir = tempfile::tempdir().unwrap();
    let tcp = Rendezvous::Tcp(format!("127.0.0.1:{}", free_port()));
    let file = Rendezvous::File(dir.path().join("id"));
    for rendezvous in [tcp, file] {
        let got = exchange_on_threads(&rendezvous, 4, |_| 4, &id);
        for (rank, result) in got.into_iter().enumerate() {
            assert_eq!(result.unwrap(), id, "rank {rank} through {rendezvous}");
        }
    }
    // The file is left for late readers; a second run must not take it for its own.
    let again = Rendezvous::File(dir.path().join("id"));
    let err = again
        .exchange(0, 2, || Ok(id.clone()), Duration::from_secs(1))
        .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
}

#[test]
fn ranks_that_disagree_on_the_group_size_are_refused() {
    let id = vec![9u8; 128];
    let dir = tempfile::tempdir().unwrap();
    let tcp = Rendezvous::Tcp(format!("127.0.0.1:{}", free_port()));
    // Rank 2 thinks the group has 5 ranks, so rank 0 never hears from a rank 2 of 3 and
    // times out; rank 2 is told why.
    let got = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..3)
            .map(|rank| {
                let (tcp, id) = (&tcp, &id);
                scope.spawn(move || {
                    let world = if rank == 2 { 5 } else { 3 };
                    tcp.exchange(rank, world, || Ok(id.clone()), Duration::from_secs(2))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(got[1].as_ref().unwrap(), &id);
    let refused = got[2].as_ref().unwrap_err().to_string();
    assert!(
        refused.contains("group of 3, this rank one of 5"),
        "{refused}"
    );
    match &got[0] {
        Err(Error::Comm(CommError::Timeout { missing, .. })) => assert_eq!(missing, "[2]"),
        other => panic!("rank 0: expected a timeout, got {other:?}"),
    }
    let file = Rendezvous::File(dir.path().join("id"));
    let got = exchange_on_threads(&file, 2, |rank| 2 + rank, &id);
    assert_eq!(got[0].as_ref().unwrap(), &id);
    let refused = got[1].as_ref().unwrap_err().to_string();
    assert!(
        refused.contains("group of 2, this rank one of 3"),
        "{refused}"
    );
}
