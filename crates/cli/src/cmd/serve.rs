//! `agentworld serve`: the OpenAI-compatible server of `agentworld-serve` on a local model.

use std::net::SocketAddr;
use std::path::PathBuf;

use agentworld_engine::Engine;
use agentworld_serve::{EngineHandle, ServeConfig};
use anyhow::{Context, Result, bail};

use crate::backend::{BackendKind, OnBackend, dispatch};
use crate::{paths, progress};

/// Arguments of `agentworld serve`.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
agentworld serve --port 8000\n  \
agentworld serve --model path/to/Qwen-AgentWorld --backend cuda --max-batch 32 --max-model-len 32768\n\n\
Then: curl http://127.0.0.1:8000/v1/chat/completions -H 'Content-Type: application/json' \\\n    \
-d '{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 50}'")]
pub struct Args {
    /// Model directory (Hugging Face layout); default: the demo model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Where the model runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    #[command(flatten)]
    precision: crate::backend::Precision,
    /// Memory of the device in GiB, for the memory plan checked before loading (default: the
    /// GPU's total from nvidia-smi on CUDA, available RAM on the CPU; unchecked on wgpu).
    #[arg(long, value_name = "GIB")]
    gpu_memory: Option<f64>,
    /// Address to listen on (loopback by default; use 0.0.0.0 to accept other machines).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Most sequences decoded together (continuous batching).
    #[arg(long, default_value_t = 16)]
    max_batch: usize,
    /// Most requests waiting for a batch slot; more are refused with 503 and Retry-After.
    #[arg(long, default_value_t = 256)]
    max_queue: usize,
    /// Longest prompt plus output in tokens (default: the model's context).
    #[arg(long)]
    max_model_len: Option<usize>,
    /// Model id clients use (default: the model card's name, else the directory name).
    #[arg(long)]
    served_model_name: Option<String>,
    /// The web playground to serve at `/` (the output of `trunk build` in web/). Default:
    /// web/dist of this checkout when it has been built; `--web-dir ''` serves none.
    #[arg(long, value_parser = any_path)]
    web_dir: Option<PathBuf>,
}

/// Loads a model directory onto a new engine thread (`agentworld rollout` runs its local
/// world model this way too).
pub(crate) struct Load {
    /// The model directory.
    pub(crate) dir: PathBuf,
    /// Batch and queue sizes.
    pub(crate) config: ServeConfig,
    /// `--dtype` / `--quantize`.
    pub(crate) precision: crate::backend::Precision,
    /// Device memory the plan must fit, bytes (`None`: what [`device_memory`] finds).
    pub(crate) memory: Option<f64>,
}

/// The memory `B`'s device has, bytes, where it can be found: the GPU's total from
/// `nvidia-smi` on CUDA, `MemAvailable` of /proc/meminfo on the CPU.
fn device_memory<B: burn::tensor::backend::Backend>(device: &B::Device) -> Option<f64> {
    let kind = agentworld_model::DeviceKind::of::<B>(device);
    if kind == agentworld_model::DeviceKind::Cuda {
        let out = std::process::Command::new("nvidia-smi")
            .args(["--query-gpu=memory.total", "--format=csv,noheader,nounits"])
            .output()
            .ok()?;
        let mib: f64 = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()?;
        Some(mib * 1024.0 * 1024.0)
    } else if kind.is_host() {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024.0)
    } else {
        None
    }
}

/// The memory plan of the model in `dir` held as `options`, checked against `memory` (or the
/// device's): the plan's line, or an error with the numbers and what to change when it does
/// not fit (before any weight is read, as vLLM refuses).
fn check_plan<B: burn::tensor::backend::Backend>(
    dir: &std::path::Path,
    options: agentworld_model::LoadOptions,
    config: &ServeConfig,
    memory: Option<f64>,
    device: &B::Device,
) -> Result<String> {
    use agentworld_model::memory::{GIB, UTILIZATION};
    let path = dir.join("config.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let model =
        agentworld_model::Qwen35MoeConfig::from_json_str(&text, &path.display().to_string())?;
    let plan = super::inspect::plan(&model, options, config.max_model_len, config.max_batch);
    let Some(memory) = memory.or_else(|| device_memory::<B>(device)) else {
        return Ok(format!(
            "{} (device memory unknown: pass --gpu-memory GIB to check)",
            plan.line()
        ));
    };
    if !plan.fits(memory) {
        bail!(
            "the model does not fit: {} needs {:.2} GiB ({:.2} GiB of weights + {} x {:.3} GiB of cache at {} tokens), and {:.0}% of the {:.2} GiB here is {:.2} GiB; try --dtype bf16, --quantize int8 (CPU), a smaller --max-batch or --max-model-len, or a bigger device",
            plan.line(),
            plan.total() / GIB,
            plan.weights / GIB,
            plan.max_batch,
            plan.cache_per_seq / GIB,
            plan.max_model_len,
            UTILIZATION * 100.0,
            memory / GIB,
            UTILIZATION * memory / GIB
        );
    }
    Ok(format!("{} of {:.2} GiB", plan.line(), memory / GIB))
}

impl OnBackend for Load {
    type Output = EngineHandle;
    fn run<B: burn::tensor::backend::Backend>(self, device: B::Device) -> Result<EngineHandle> {
        let dir = self.dir.clone();
        let options = self.precision.resolve::<B>(&dir, &device)?;
        let line = check_plan::<B>(&dir, options, &self.config, self.memory, &device)?;
        eprintln!("{line}");
        EngineHandle::spawn(
            move || {
                let pb = progress::bar(
                    0,
                    &format!("loading weights ({})", progress::describe(options)),
                );
                let engine =
                    Engine::<B>::load_dir_with(&dir, &device, options, &mut |done, total| {
                        pb.set_length(total as u64);
                        pb.set_position(done as u64);
                    });
                pb.finish_and_clear();
                engine
            },
            &self.config,
        )
        .with_context(|| format!("loading the model in {}", self.dir.display()))
    }
}

/// Runs the server until Ctrl-C.
pub fn run(args: Args) -> Result<()> {
    let dir = args.model.unwrap_or_else(paths::default_model);
    if !dir.join("config.json").is_file() {
        bail!(
            "{} is not a model directory (no config.json); pass --model DIR",
            dir.display()
        );
    }
    let addr: SocketAddr = format!("{}:{}", args.host, args.port)
        .parse()
        .or_else(|_| {
            std::net::ToSocketAddrs::to_socket_addrs(&(args.host.as_str(), args.port))
                .ok()
                .and_then(|mut a| a.next())
                .context("no address")
        })
        .with_context(|| format!("--host {} is not an address to listen on", args.host))?;
    let name = args
        .served_model_name
        .or_else(|| {
            let card = std::fs::read_to_string(dir.join("agentworld.json")).ok()?;
            let card: serde_json::Value = serde_json::from_str(&card).ok()?;
            card["name"].as_str().map(str::to_owned)
        })
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "agentworld".into());
    let config = ServeConfig {
        model_name: name.clone(),
        max_batch: args.max_batch,
        max_queue: args.max_queue,
        max_model_len: args.max_model_len,
    };
    config.validate()?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let web_dir = match args.web_dir {
        Some(d) if d.as_os_str().is_empty() => None,
        Some(d) if !d.join("index.html").is_file() => bail!(
            "--web-dir {}: no index.html there; build the playground with `trunk build` in web/",
            d.display()
        ),
        Some(d) => Some(d),
        None => {
            Some(paths::repo_root().join("web/dist")).filter(|d| d.join("index.html").is_file())
        }
    };
    if let Some(g) = args.gpu_memory
        && !(g.is_finite() && g > 0.0)
    {
        bail!("--gpu-memory {g}: give the device's memory in GiB, e.g. --gpu-memory 80");
    }
    let engine = dispatch(
        args.backend,
        Load {
            dir,
            config,
            precision: args.precision,
            memory: args.gpu_memory.map(|g| g * agentworld_model::memory::GIB),
        },
    )?;
    let max_model_len = engine.info.max_model_len;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}; is the port already in use?"))?;
        let bound = listener.local_addr().context("reading the bound address")?;
        eprintln!(
            "agentworld serve: model `{name}` (max batch {}, max model len {max_model_len}) \
             listening on http://{bound}",
            args.max_batch
        );
        match &web_dir {
            Some(d) => eprintln!("playground ({}) at http://{bound}/", d.display()),
            None => eprintln!("no playground served (build it with `trunk build` in web/)"),
        }
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let router = agentworld_serve::router_with_web(engine, web_dir);
        agentworld_serve::serve_router(listener, router, shutdown).await?;
        Ok(())
    })
}

/// A path as given, the empty one included (clap's own path parser refuses `''`, which
/// `--web-dir` takes for "serve no playground").
fn any_path(text: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(text))
}
