//! Data-parallel training: every rank holds the whole model, takes its shard of each global
//! batch, and computes its gradients; they are averaged over the ranks (`gpu_dsl::runtime::comm`,
//! NCCL on GPUs) in buckets on a second stream while the rest of the backward pass runs, so
//! the optimizer's step, the same on every rank, keeps the replicas identical.
//!
//! Each rank's loss is the mean over its shard, so the mean of the ranks' gradients is the
//! gradient of the mean loss over the global batch: N ranks at global batch B train like one
//! rank at batch B, up to the rounding of sums taken in another order.

use std::time::Instant;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::comm::{Communicator, RankEnv, ReduceOp};
use gpu_dsl::runtime::Backend;

use super::{
    evaluate_on, init_model, layer_sizes, upload_dataset, Dataset, EpochStats, Model, Progress,
    Random, TrainConfig, Trainer, PROGRESS_EVERY,
};

/// Gradient bytes gathered before a bucket is reduced: PyTorch DDP's default bucket size,
/// large enough that each exchange runs at the link's bandwidth, small enough that the first
/// starts early in the backward pass.
const BUCKET_BYTES: usize = 25 << 20;

/// Where the ranks run.
pub enum Ranks {
    /// This process drives every device, a thread per rank (CPU-backend ranks: `Gpu::cpu()`
    /// once per rank).
    Threads(Vec<Gpu>),
    /// This process is one rank of a group that a launcher started (`scripts/launch`).
    Process {
        /// This rank's device.
        gpu: Gpu,
        /// Its place in the group.
        env: RankEnv,
    },
}

/// Trains data-parallel over `ranks` with global batch `config.batch` (a multiple of the
/// ranks); returns the model, checked to be the same bits on every rank. Only rank 0 reports
/// progress and epochs, and evaluates.
pub fn train_parallel(
    ranks: Ranks,
    config: &TrainConfig,
    train: &Dataset,
    test: &Dataset,
    on_progress: &mut dyn FnMut(&Progress),
    on_epoch: &mut dyn FnMut(&EpochStats),
) -> gpu_dsl::Result<Model> {
    match ranks {
        Ranks::Threads(gpus) => {
            let mut models = train_threads(&gpus, config, train, test, on_progress, on_epoch)?;
            Ok(models.swap_remove(0))
        }
        Ranks::Process { gpu, env } => {
            let comm = Communicator::from_env(&gpu, &env)?;
            run_rank(&comm, config, train, test, on_progress, on_epoch)
        }
    }
}

/// Every rank's model, rank 0 on this thread (with the callbacks), the others on threads of
/// their own.
fn train_threads(
    gpus: &[Gpu],
    config: &TrainConfig,
    train: &Dataset,
    test: &Dataset,
    on_progress: &mut dyn FnMut(&Progress),
    on_epoch: &mut dyn FnMut(&EpochStats),
) -> gpu_dsl::Result<Vec<Model>> {
    let comms = Communicator::for_devices(gpus)?;
    std::thread::scope(|scope| {
        let mut comms = comms.into_iter();
        let first = comms.next();
        let others: Vec<_> = comms
            .map(|comm| {
                scope.spawn(move || run_rank(&comm, config, train, test, &mut |_| {}, &mut |_| {}))
            })
            .collect();
        let rank0 = first
            .as_ref()
            .map(|comm| run_rank(comm, config, train, test, on_progress, on_epoch));
        // A rank 0 that failed leaves the group, so the others stop waiting for it.
        drop(first);
        let mut models = vec![rank0.unwrap_or_else(|| Err(no_ranks()))?];
        for other in others {
            let model = other
                .join()
                .unwrap_or_else(|_| Err(gpu_dsl::Error::InvalidLaunch("a rank panicked".into())))?;
            models.push(model);
        }
        Ok(models)
    })
}

fn no_ranks() -> gpu_dsl::Error {
    gpu_dsl::Error::InvalidLaunch("data-parallel training needs at least one device".into())
}

/// This rank's share of an epoch: for each of `steps` global batches of `global` samples
/// (in `order`), the `local` samples at `rank`'s place in it, as the permutation the batch
/// gathering reads; padded to the permutation's length with indices nothing reads.
fn shard(order: &[u32], steps: usize, global: usize, local: usize, rank: usize) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..steps)
        .flat_map(|step| &order[step * global + rank * local..][..local])
        .copied()
        .collect();
    perm.resize(order.len(), 0);
    perm
}

/// One rank's training: the loop of `train::train`, with the gradients averaged over the
/// group before every update.
fn run_rank(
    comm: &Communicator,
    config: &TrainConfig,
    train: &Dataset,
    test: &Dataset,
    on_progress: &mut dyn FnMut(&Progress),
    on_epoch: &mut dyn FnMut(&EpochStats),
) -> gpu_dsl::Result<Model> {
    let (rank, ranks, gpu) = (comm.rank(), comm.world_size(), comm.gpu());
    let global = config.batch;
    if global == 0 || !global.is_multiple_of(ranks) {
        return Err(gpu_dsl::Error::InvalidLaunch(format!(
            "a global batch of {global} does not split evenly over {ranks} ranks: pass a \
             --batch that is a multiple of the device count"
        )));
    }
    let local = global / ranks;
    let steps = train.len / global;
    if steps == 0 {
        return Err(gpu_dsl::Error::InvalidLaunch(format!(
            "a batch of {global} does not fit the {} training samples",
            train.len
        )));
    }
    let compute = match gpu.backend() {
        Backend::Cuda => gpu.new_stream()?,
        Backend::Cpu => gpu.default_stream(),
    };
    let reduce = gpu.new_stream()?;
    let mut local_config = config.clone();
    local_config.batch = local;
    local_config.fused = false;
    local_config.profile = false;
    let mut model = init_model(&layer_sizes(config, train), config.seed);
    let mut trainer = Trainer::new(&compute, &local_config, train, &model)?;
    // Every rank starts from rank 0's weights (the same seed gives the same ones; this makes
    // it so whatever the ranks' seeds).
    for layer in &mut trainer.layers {
        comm.broadcast(&compute, &mut layer.weights, 0)?;
        comm.broadcast(&compute, &mut layer.bias, 0)?;
    }
    model.layers = trainer
        .layers
        .iter()
        .map(|layer| layer.download(&compute))
        .collect::<gpu_dsl::Result<_>>()?;
    let test_set = match rank {
        0 => Some(upload_dataset(&compute, test)?),
        _ => None,
    };
    // A warm-up step compiles every kernel and starts the collectives; undone after.
    let identity: Vec<u32> = (0..train.len as u32).collect();
    trainer.perm.copy_from_host(&compute, &identity)?;
    step(&mut trainer, &compute, &reduce, comm)?;
    for (device, host) in trainer.layers.iter_mut().zip(&model.layers) {
        device.reset(&compute, host)?;
    }
    let mut shuffle = Random::new(config.seed, 2);
    let mut order = identity;
    let mut optimizer_steps = 0u32;
    for epoch in 1..=config.epochs {
        // The same shuffle on every rank (same seed), as `train::train` draws it.
        for i in (1..order.len()).rev() {
            order.swap(i, shuffle.below(i + 1));
        }
        let perm = shard(&order, steps, global, local, rank);
        trainer.perm.copy_from_host(&compute, &perm)?;
        trainer.state.set(&compute, 0, optimizer_steps)?;
        compute.synchronize()?;
        let start = Instant::now();
        for done in 1..=steps {
            step(&mut trainer, &compute, &reduce, comm)?;
            if rank == 0 && (done % PROGRESS_EVERY == 0 || done == steps) {
                // Rank 0's shard only, for the progress bar; the epoch's figures are global.
                let losses = trainer.losses.to_host(&compute)?;
                on_progress(&Progress {
                    epoch,
                    step: done,
                    steps,
                    loss: losses[..done].iter().sum::<f32>() / done as f32,
                    samples_per_second: (done * global) as f64 / start.elapsed().as_secs_f64(),
                });
            }
        }
        compute.synchronize()?;
        let seconds = start.elapsed().as_secs_f64();
        optimizer_steps += steps as u32;
        comm.all_reduce(&compute, &mut trainer.losses, ReduceOp::Mean)?;
        comm.all_reduce(&compute, &mut trainer.correct, ReduceOp::Sum)?;
        if let Some(test_set) = &test_set {
            let losses = trainer.losses.to_host(&compute)?;
            let correct = trainer.correct.to_host(&compute)?;
            let evaluation = evaluate_on(&compute, &trainer.layers, test, test_set)?;
            on_epoch(&EpochStats {
                epoch,
                train_loss: losses[..steps].iter().sum::<f32>() / steps as f32,
                train_accuracy: correct[..steps].iter().map(|&c| c as f64).sum::<f64>() as f32
                    / (steps * global) as f32,
                test_loss: evaluation.loss,
                test_accuracy: evaluation.accuracy,
                seconds,
                samples_per_second: (steps * global) as f64 / seconds,
                step_ms: seconds * 1e3 / steps as f64,
                profile: None,
                // The first-launch cost is measured by the single-device run.
                first_step_seconds: None,
            });
        }
    }
    let layers = trainer
        .layers
        .iter()
        .map(|layer| layer.download(&compute))
        .collect::<gpu_dsl::Result<_>>()?;
    let model = Model { layers };
    check_replicas(comm, &compute, &model)?;
    Ok(model)
}

/// Fails unless every rank ends with the same weights, bit for bit: each rank's fingerprint
/// of its model is gathered on every rank and compared.
fn check_replicas(comm: &Communicator, stream: &Stream, model: &Model) -> gpu_dsl::Result<()> {
    let mine = DeviceBuffer::from_host(stream, &[fingerprint(model)])?;
    let mut all = DeviceBuffer::<u64>::zeroed(stream, comm.world_size())?;
    comm.all_gather(stream, &mine, &mut all)?;
    let all = all.to_host(stream)?;
    match all.iter().position(|&print| print != all[0]) {
        Some(rank) => Err(gpu_dsl::Error::InvalidLaunch(format!(
            "data-parallel replicas diverged: rank {rank}'s weights differ from rank 0's"
        ))),
        None => Ok(()),
    }
}

/// FNV-1a over the bits of every parameter: equal models, equal prints; a difference in any
/// bit changes it (but for a 2^-64 chance).
fn fingerprint(model: &Model) -> u64 {
    let parameters = model
        .layers
        .iter()
        .flat_map(|layer| layer.weights.iter().chain(&layer.bias));
    parameters.fold(0xcbf2_9ce4_8422_2325, |hash, value| {
        value.to_bits().to_le_bytes().iter().fold(hash, |h, &byte| {
            (h ^ byte as u64).wrapping_mul(0x0100_0000_01b3)
        })
    })
}

/// One data-parallel step. From the last layer down, each layer's gradients join the open
/// bucket as soon as they are complete; a full bucket is averaged over the ranks on `reduce`,
/// after an event for the work so far on `compute`, while `compute` goes on down. The update
/// waits for the last bucket.
fn step(
    trainer: &mut Trainer,
    compute: &Stream,
    reduce: &Stream,
    comm: &Communicator,
) -> gpu_dsl::Result<()> {
    trainer.forward_loss(compute)?;
    let mut bucket: Vec<usize> = Vec::new();
    let mut bytes = 0;
    for l in (0..trainer.layers.len()).rev() {
        trainer.weight_gradient(compute, l)?;
        let layer = &trainer.layers[l];
        bytes += (layer.grad_weights.len() + layer.grad_bias.len()) * 4;
        bucket.push(l);
        if bytes >= BUCKET_BYTES || l == 0 {
            reduce.wait_event(&compute.record_event()?)?;
            let mut grads: Vec<&mut DeviceBuffer<f32>> = trainer
                .layers
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| bucket.contains(i))
                .flat_map(|(_, layer)| [&mut layer.grad_weights, &mut layer.grad_bias])
                .collect();
            comm.all_reduce_bucket(reduce, &mut grads, ReduceOp::Mean)?;
            bucket.clear();
            bytes = 0;
        }
        trainer.input_gradient(compute, l)?;
    }
    compute.wait_event(&reduce.record_event()?)?;
    trainer.update(compute)
}

#[cfg(test)]
mod tests;
