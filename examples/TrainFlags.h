// kiln-train's flags as llvm::cl options, in one struct so nothing lives at
// file scope (TrainArgs.cpp parses and checks them). Names and, where kiln
// has no reason to differ, defaults are Hugging Face's run_clm.py and
// TrainingArguments'; --help prints them in this order.
#ifndef KILN_EXAMPLES_TRAINFLAGS_H
#define KILN_EXAMPLES_TRAINFLAGS_H

#include "examples/TrainArgs.h"
#include "examples/UnsupportedFlags.h"

#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace kiln::train {

namespace cl = llvm::cl;

// Members are constructed in order, so a category exists before the
// options that name it.
struct Flags {
  cl::OptionCategory model{"Model (GPT-2 or Llama configuration)"};
  cl::opt<std::string> modelType{
      "model_type",
      cl::desc("model family: gpt2 or llama. Given (as run_clm.py takes "
               "it), the model starts from transformers' default config "
               "(GPT2Config(): GPT-2 124M; LlamaConfig(): Llama 2 7B's "
               "shape), the n_* flags overriding; not given, kiln's small "
               "defaults. A Llama of n_* flags has as many key/value heads "
               "as heads and an MLP 8/3 as wide as n_embd. A folder's "
               "config.json decides the family instead"),
      cl::init("gpt2"), cl::cat(model)};
  cl::opt<std::string> modelNameOrPath{
      "model_name_or_path",
      cl::desc("start from this model: a folder with config.json and "
               "model.safetensors (or shards with their index), or a hub "
               "name found in the hub cache (--cache_dir, $HF_HUB_CACHE, "
               "$HF_HOME/hub); its tokenizer too unless another is named"),
      cl::value_desc("dir|name"), cl::cat(model)};
  cl::opt<std::string> configName{
      "config_name",
      cl::desc("train from scratch with this config.json's shape (a folder "
               "or hub name, as --model_name_or_path)"),
      cl::value_desc("dir|name"), cl::cat(model)};
  cl::opt<std::string> hubCache{
      "cache_dir",
      cl::desc("where hub models are looked for (run_clm's --cache_dir: "
               "models--org--name/snapshots/REV/; default: $HF_HUB_CACHE, "
               "else $HF_HOME/hub, else ~/.cache/huggingface/hub); kiln "
               "never downloads"),
      cl::value_desc("dir"), cl::cat(model)};
  cl::opt<std::string> modelRevision{
      "model_revision",
      cl::desc("the revision hub names resolve at in the hub cache: a "
               "branch or tag refs/ names, or a commit (default: main)"),
      cl::init("main"), cl::cat(model)};
  cl::opt<std::string> configOverrides{
      "config_overrides",
      cl::desc("run_clm.py's: fields of the config a model trained from "
               "scratch starts from, changed before it is built, e.g. "
               "n_embd=128,resid_pdrop=0.2 (the family's config.json keys; "
               "not with --model_name_or_path or --config_name)"),
      cl::value_desc("key=value,..."), cl::cat(model)};
  cl::opt<long> nLayer{"n_layer", cl::desc("transformer blocks (default: 2)"),
                       cl::init(2), cl::cat(model)};
  cl::opt<long> nEmbd{"n_embd", cl::desc("hidden size (default: 64)"),
                      cl::init(64), cl::cat(model)};
  cl::opt<long> nHead{"n_head", cl::desc("attention heads (default: 4)"),
                      cl::init(4), cl::cat(model)};
  cl::opt<long> nPositions{"n_positions",
                           cl::desc("maximum sequence length (default: 128)"),
                           cl::init(128), cl::cat(model)};
  cl::opt<long> vocabSize{
      "vocab_size",
      cl::desc("embedding rows (default: the tokenizer's vocabulary)"),
      cl::init(0), cl::cat(model)};
  cl::opt<double> dropout{
      "dropout", cl::desc("resid/embd/attn dropout probability (default: 0.1)"),
      cl::init(0.1), cl::cat(model)};

  cl::opt<bool> useLora{
      "use_lora",
      cl::desc("fine-tune LoRA adapters (PEFT's LoraConfig) on a frozen "
               "base; the final model is adapter_config.json + "
               "adapter_model.safetensors, which peft's PeftModel loads"),
      cl::cat(model)};
  cl::opt<long> loraR{"lora_r", cl::desc("LoRA rank (default: 8)"), cl::init(8),
                      cl::cat(model)};
  cl::opt<double> loraAlpha{"lora_alpha",
                            cl::desc("LoRA alpha; the branch is scaled by "
                                     "alpha / r (default: 16)"),
                            cl::init(16.0), cl::cat(model)};
  cl::opt<bool> useRslora{
      "use_rslora",
      cl::desc("rank-stabilised LoRA (PEFT's use_rslora): the branch is "
               "scaled by alpha / sqrt(r) instead of alpha / r"),
      cl::cat(model)};
  cl::opt<double> loraDropout{
      "lora_dropout",
      cl::desc("dropout on the LoRA branch's input (default: 0.05)"),
      cl::init(0.05), cl::cat(model)};
  cl::list<std::string> loraTargetModules{
      "lora_target_modules",
      cl::desc("modules to adapt, PEFT's names, comma-separated (default: "
               "the model type's, c_attn for gpt2)"),
      cl::CommaSeparated, cl::cat(model)};
  cl::list<long> loraLayersToTransform{
      "lora_layers_to_transform",
      cl::desc("adapt the target modules in these layers only, "
               "comma-separated indices (PEFT's layers_to_transform; "
               "default: every layer)"),
      cl::CommaSeparated, cl::cat(model)};
  cl::list<std::string> loraLayersPattern{
      "lora_layers_pattern",
      cl::desc("the layer list whose index --lora_layers_to_transform "
               "counts, e.g. h or layers (PEFT's layers_pattern; default: "
               "the first numbered part of a module's name)"),
      cl::CommaSeparated, cl::cat(model)};
  cl::list<std::string> loraModulesToSave{
      "lora_modules_to_save",
      cl::desc("modules trained whole beside the adapters and saved with "
               "them, PEFT's modules_to_save (e.g. ln_f)"),
      cl::CommaSeparated, cl::cat(model)};
  cl::opt<std::string> torchDtype{
      "torch_dtype",
      cl::desc("the dtype the model's weights are stored in: auto | "
               "float32 | bfloat16 | float16 (run_clm.py's flag). With "
               "--use_lora, bfloat16 or float16 stores the frozen base in "
               "that type (half the bytes) while the adapters and their "
               "optimizer stay f32; full fine-tuning keeps f32 weights "
               "(use --bf16 or --fp16 for mixed precision)"),
      cl::init("auto"), cl::cat(model)};
  cl::opt<bool> mergeLora{
      "merge_lora",
      cl::desc("also write output_dir/merged: the base with the adapters "
               "folded in, a plain model folder"),
      cl::cat(model)};

  cl::OptionCategory data{"Data"};
  cl::opt<std::string> tokenizerDir{
      "tokenizer_dir",
      cl::desc("directory with tokenizer.json or vocab.json + merges.txt "
               "(default: byte-level tokenizer, vocabulary 256)"),
      cl::value_desc("dir"), cl::cat(data)};
  cl::opt<std::string> tokenizerName{
      "tokenizer_name",
      cl::desc("tokenizer folder or hub name (tokenizer.json or vocab.json "
               "+ merges.txt), resolved as --model_name_or_path"),
      cl::value_desc("dir|name"), cl::cat(data)};
  cl::opt<std::string> datasetName{
      "dataset_name",
      cl::desc("a data set by name (glue, wikitext, ...), read from plain "
               "files under $KILN_DATA_DIR (else ~/.cache/kiln/data): "
               "NAME/CONFIG/, CONFIG/ or NAME/ with train.* and validation "
               "or dev files"),
      cl::value_desc("name"), cl::cat(data)};
  cl::opt<std::string> datasetConfigName{
      "dataset_config_name",
      cl::desc("the data set's configuration (sst2, wikitext-2-raw-v1, ...)"),
      cl::value_desc("name"), cl::cat(data)};
  cl::opt<long> validationSplitPercentage{
      "validation_split_percentage",
      cl::desc("with --dataset_name and no validation split: the first N% "
               "of the training texts become the validation set, as "
               "run_clm.py (default: 5)"),
      cl::init(5), cl::cat(data)};
  cl::opt<std::string> trainFile{
      "train_file",
      cl::desc("training data (default: a generated demo corpus)"),
      cl::value_desc("file"), cl::cat(data)};
  cl::opt<std::string> validationFile{"validation_file",
                                      cl::desc("evaluation data"),
                                      cl::value_desc("file"), cl::cat(data)};
  cl::opt<std::string> dataset{
      "dataset",
      cl::desc("format of the data files: text | sst2 | csv | jsonl "
               "(default: from the extension: .tsv sst2, .csv csv, "
               ".jsonl/.json jsonl (instruction or \"text\" records), "
               "else text)"),
      cl::init("auto"), cl::cat(data)};
  cl::opt<bool> keepLinebreaks{
      "keep_linebreaks",
      cl::desc("text files: each line keeps its line break, as run_clm.py "
               "reads them (default: true)"),
      cl::init(true), cl::cat(data)};
  cl::opt<long> preprocessingNumWorkers{
      "preprocessing_num_workers",
      cl::desc("run_clm.py's tokenizer processes; kiln-train tokenizes on "
               "one thread and says so"),
      cl::init(0), cl::cat(data)};
  cl::opt<long> blockSize{
      "block_size", cl::desc("tokens per training sequence (default: 32)"),
      cl::init(32), cl::cat(data)};
  cl::opt<long> maxTrainSamples{
      "max_train_samples",
      cl::desc("use only the first N training blocks (default: all)"),
      cl::init(-1), cl::cat(data)};
  cl::opt<long> maxEvalSamples{
      "max_eval_samples",
      cl::desc("use only the first N validation blocks (default: all)"),
      cl::init(-1), cl::cat(data)};
  cl::opt<long> corpusLines{
      "default_corpus_lines",
      cl::desc(
          "lines of the generated corpus (no --train_file) (default: 200)"),
      cl::init(200), cl::cat(data)};

  cl::OptionCategory training{"Training"};
  cl::opt<bool> doTrain{"do_train",
                        cl::desc("train (default: true unless only "
                                 "--do_eval is given)"),
                        cl::cat(training)};
  cl::opt<bool> doEval{"do_eval",
                       cl::desc("evaluate on the validation set after "
                                "training (default: when there is one and "
                                "neither --do_train nor --do_eval is given)"),
                       cl::cat(training)};
  cl::opt<long> trainBatch{"per_device_train_batch_size",
                           cl::desc("sequences per training step (default: 8)"),
                           cl::init(8), cl::cat(training)};
  cl::opt<long> gradientAccumulationSteps{
      "gradient_accumulation_steps",
      cl::desc("micro-batches whose gradients add up to one optimizer step "
               "(default: 1)"),
      cl::init(1), cl::cat(training)};
  cl::opt<long> evalBatch{
      "per_device_eval_batch_size",
      cl::desc("sequences per evaluation step (default: 8)"), cl::init(8),
      cl::cat(training)};
  cl::opt<double> learningRate{
      "learning_rate", cl::desc("AdamW peak learning rate (default: 2e-3)"),
      cl::init(2e-3), cl::cat(training)};
  cl::opt<double> weightDecay{"weight_decay",
                              cl::desc("AdamW weight decay (not on biases and "
                                       "LayerNorm weights) (default: 0.0)"),
                              cl::init(0.0), cl::cat(training)};
  cl::opt<double> maxGradNorm{
      "max_grad_norm",
      cl::desc("gradient clipping norm (0: none) (default: 1.0)"),
      cl::init(1.0), cl::cat(training)};
  cl::opt<double> warmupSteps{
      "warmup_steps",
      cl::desc("linear warmup steps; below 1, that share of the run's steps, "
               "rounded up (default: 0)"),
      cl::init(0), cl::cat(training)};
  cl::opt<double> warmupRatio{
      "warmup_ratio",
      cl::desc("warmup as a fraction of the total steps, rounded up (when "
               "--warmup_steps is 0) (default: 0.0)"),
      cl::init(0.0), cl::cat(training)};
  cl::opt<std::string> scheduler{
      "lr_scheduler_type",
      cl::desc("linear | cosine | cosine_with_restarts | polynomial | "
               "constant | constant_with_warmup | inverse_sqrt | "
               "cosine_with_min_lr, transformers' schedules (default: "
               "linear)"),
      cl::init("linear"), cl::cat(training)};
  cl::opt<std::string> schedulerKwargs{
      "lr_scheduler_kwargs",
      cl::desc("the schedule's extra arguments as a JSON object, as "
               "transformers takes them: num_cycles (cosine, "
               "cosine_with_restarts, cosine_with_min_lr), power and lr_end "
               "(polynomial), timescale (inverse_sqrt), min_lr or "
               "min_lr_rate (cosine_with_min_lr, which needs one)"),
      cl::value_desc("json"), cl::cat(training)};
  cl::opt<std::string> optim{
      "optim",
      cl::desc("the optimizer: adamw_torch (default), or a name of the "
               "same AdamW formula (adamw_torch_fused, adamw_apex_fused, "
               "adamw_torch_xla, adamw_torch_npu_fused; adamw_hf with a "
               "note); other optimizers are not built"),
      cl::init("adamw_torch"), cl::cat(training)};
  cl::opt<std::string> deepspeed{
      "deepspeed",
      cl::desc("a DeepSpeed config (JSON), read as the Trainer reads "
               "one: zero_optimization.stage 0 (every process holds the "
               "optimizer's state), 1 (each holds its share; under "
               "mpirun -np N, about 1/N) or 2 (the averaged gradients "
               "too); \"auto\" values take the flags' and numbers must "
               "equal them; a WarmupLR / WarmupDecayLR scheduler and "
               "fp16's loss scaling are followed; communication tuning "
               "is named in a note (docs/DATA-PARALLEL.md)"),
      cl::value_desc("file"), cl::cat(training)};
  cl::opt<std::string> fsdp{
      "fsdp",
      cl::desc("the Trainer's FSDP options: \"shard_grad_op\" shards the "
               "optimizer's state and the averaged gradients over mpirun's "
               "processes (as --deepspeed's ZeRO stage 2), \"no_shard\" "
               "nothing; \"auto_wrap\" is taken with a note. full_shard, "
               "hybrid_shard and offload are not built"),
      cl::value_desc("options"), cl::cat(training)};
  cl::opt<double> labelSmoothingFactor{
      "label_smoothing_factor",
      cl::desc("mix this share of the uniform distribution into each label "
               "(the Trainer's LabelSmoother; the evaluation loss is "
               "smoothed too, as the Trainer's) (default: 0)"),
      cl::init(0.0), cl::cat(training)};
  cl::opt<double> neftuneNoiseAlpha{
      "neftune_noise_alpha",
      cl::desc("NEFTune: in training, uniform noise within ±alpha / "
               "sqrt(block_size · n_embd) on the token embeddings, as the "
               "Trainer adds it (default: 0, none)"),
      cl::init(0.0), cl::cat(training)};
  cl::opt<double> adamBeta1{"adam_beta1",
                            cl::desc("AdamW's beta1 (default: 0.9)"),
                            cl::init(0.9), cl::cat(training)};
  cl::opt<double> adamBeta2{"adam_beta2",
                            cl::desc("AdamW's beta2 (default: 0.999)"),
                            cl::init(0.999), cl::cat(training)};
  cl::opt<double> adamEpsilon{"adam_epsilon",
                              cl::desc("AdamW's epsilon (default: 1e-8)"),
                              cl::init(1e-8), cl::cat(training)};
  cl::opt<double> epochs{
      "num_train_epochs",
      cl::desc("epochs (when --max_steps is not set) (default: 3.0)"),
      cl::init(3.0), cl::cat(training)};
  cl::opt<long> maxSteps{
      "max_steps",
      cl::desc("total training steps (overrides epochs) (default: -1)"),
      cl::init(-1), cl::cat(training)};
  cl::opt<double> loggingSteps{
      "logging_steps",
      cl::desc("steps between loss log lines; below 1, that share of the "
               "run's steps, rounded up (default: 10)"),
      cl::init(10), cl::cat(training)};
  cl::opt<bool> loggingFirstStep{
      "logging_first_step",
      cl::desc("log the first step's loss too (default: false)"),
      cl::cat(training)};
  cl::opt<bool> includeNumInputTokensSeen{
      "include_num_input_tokens_seen",
      cl::desc("logs add num_input_tokens_seen: the tokens of the training "
               "batches' real rows so far (a padded batch's padding rows "
               "left out), as the Trainer counts them (default: false)"),
      cl::cat(training)};
  cl::opt<std::string> loggingStrategy{
      "logging_strategy",
      cl::desc("when the loss is logged: steps (every --logging_steps) | "
               "epoch | no (default: steps)"),
      cl::init("steps"), cl::cat(training)};
  cl::opt<std::string> evalStrategy{
      "eval_strategy",
      cl::desc("when the validation set is evaluated during training: no | "
               "steps (every --eval_steps) | epoch (default: no)"),
      cl::init("no"), cl::cat(training)};
  cl::opt<std::string> evaluationStrategy{
      "evaluation_strategy", cl::desc("the older name of --eval_strategy"),
      cl::cat(training)};
  cl::opt<bool> evalOnStart{
      "eval_on_start",
      cl::desc("evaluate once before the first training step, a check of "
               "the evaluation before a long run (default: false)"),
      cl::cat(training)};
  cl::opt<double> evalSteps{
      "eval_steps",
      cl::desc("steps between evaluations; below 1, that share of the "
               "run's steps, rounded up (default: --logging_steps)"),
      cl::init(0), cl::cat(training)};
  cl::opt<double> evalDelay{
      "eval_delay",
      cl::desc("no evaluation during training before this many steps (or "
               "epochs, with --eval_strategy epoch) (default: 0)"),
      cl::init(0.0), cl::cat(training)};
  cl::opt<bool> dataloaderDropLast{
      "dataloader_drop_last",
      cl::desc("drop each epoch's last partial batch (default: false: it is "
               "padded with rows the loss ignores)"),
      cl::cat(training)};
  cl::list<std::string> reportTo{
      "report_to",
      cl::desc("logging integrations: none or all (kiln has none besides "
               "the Trainer-style log lines on stdout; a named integration "
               "is an error)"),
      cl::CommaSeparated, cl::cat(training)};
  cl::opt<bool> disableTqdm{
      "disable_tqdm",
      cl::desc("no progress bar (it is drawn only on a terminal anyway)"),
      cl::cat(training)};
  cl::opt<unsigned long> seed{
      "seed", cl::desc("seed of weights, dropout, shuffling (default: 42)"),
      cl::init(42), cl::cat(training)};
  cl::opt<unsigned long> dataSeed{
      "data_seed", cl::desc("seed of the data order alone (default: --seed)"),
      cl::cat(training)};

  cl::OptionCategory checkpoints{"Checkpoints"};
  cl::opt<std::string> saveStrategy{
      "save_strategy",
      cl::desc("when checkpoints are saved in output_dir: steps (every "
               "--save_steps) | epoch | best (after an evaluation that found "
               "a new best --metric_for_best_model) | no (default: steps)"),
      cl::init("steps"), cl::cat(checkpoints)};
  cl::opt<std::string> outputDir{
      "output_dir", cl::desc("where checkpoints and the final model go"),
      cl::value_desc("dir"), cl::cat(checkpoints)};
  cl::opt<double> saveSteps{
      "save_steps",
      cl::desc("steps between checkpoints in output_dir/checkpoint-N (0: "
               "none); below 1, that share of the run's steps, rounded up "
               "(default: 500)"),
      cl::init(500), cl::cat(checkpoints)};
  cl::opt<std::string> resume{
      "resume_from_checkpoint",
      cl::desc("checkpoint folder to continue from; True: the newest "
               "complete checkpoint-N in output_dir; False: start afresh "
               "(default: the newest complete one if output_dir has any)"),
      cl::value_desc("dir"), cl::cat(checkpoints)};
  cl::opt<bool> overwriteOutputDir{
      "overwrite_output_dir",
      cl::desc("train from scratch even when output_dir holds checkpoints, "
               "deleting them (default: resume from the newest)"),
      cl::cat(checkpoints)};
  cl::opt<bool> loadBestModelAtEnd{
      "load_best_model_at_end",
      cl::desc("after training, load the checkpoint that evaluated best on "
               "--metric_for_best_model as the final model; needs "
               "--save_strategy best or equal to --eval_strategy (and "
               "--save_steps a multiple of --eval_steps); rotation keeps that "
               "checkpoint"),
      cl::cat(checkpoints)};
  cl::opt<std::string> metricForBestModel{
      "metric_for_best_model",
      cl::desc("the evaluation's metric that picks the best checkpoint, "
               "with or without its eval_ prefix (default: loss)"),
      cl::init("loss"), cl::cat(checkpoints)};
  cl::opt<bool> greaterIsBetter{
      "greater_is_better",
      cl::desc("a greater metric is better (default: false for a metric "
               "ending in loss, else true)"),
      cl::cat(checkpoints)};
  cl::opt<bool> saveSafetensors{
      "save_safetensors",
      cl::desc("checkpoints and models in safetensors: kiln's only format "
               "(False is refused) (default: true)"),
      cl::init(true), cl::cat(checkpoints)};
  cl::opt<long> saveTotalLimit{
      "save_total_limit",
      cl::desc("keep at most N checkpoints, deleting the oldest (0: all) "
               "(default: 0)"),
      cl::init(0), cl::cat(checkpoints)};

  cl::OptionCategory execution{"Execution"};
  cl::opt<bool> eager{"eager",
                      cl::desc("run each op at once as its own kernel, the "
                               "baseline without graph compilation (default: "
                               "$KILN_MODE, else graph mode)"),
                      cl::cat(execution)};
  // cl::desc keeps a reference: the text must outlive the option.
  std::string backendHelp = std::string("reference | cpu | cuda (default: "
                                        "$KILN_BACKEND, else ") +
                            kDefaultBackend + ")";
  cl::opt<std::string> backend{"backend", cl::desc(backendHelp),
                               cl::init(kDefaultBackend), cl::cat(execution)};
  cl::opt<std::string> ddpTimeout{
      "ddp_timeout",
      cl::desc("seconds a data-parallel run's collective waits for the other "
               "processes before the run ends with an error naming it "
               "(default: $KILN_COLLECTIVE_TIMEOUT, else 1800)"),
      cl::value_desc("seconds"), cl::cat(execution)};
  cl::opt<bool> useCpu{"use_cpu", cl::desc("train on the CPU: --backend cpu"),
                       cl::cat(execution)};
  cl::opt<bool> noCuda{"no_cuda", cl::desc("the older name of --use_cpu"),
                       cl::cat(execution)};
  cl::opt<std::string> cudaArch{
      "cuda_arch",
      cl::desc("GPU architecture for --backend cuda: sm_80 | sm_90 (default: "
               "$KILN_CUDA_ARCH, else sm_90)"),
      cl::cat(execution)};
  cl::opt<bool> tf32{"tf32",
                     cl::desc("--backend cuda: f32 matrix products in TF32 "
                              "(default: exact f32, as PyTorch)"),
                     cl::cat(execution)};
  cl::opt<bool> bf16{"bf16",
                     cl::desc("mixed precision: matrix products in bf16 "
                              "with f32 sums (PyTorch's autocast); weights, "
                              "optimizer and loss stay f32 (default: "
                              "$KILN_BF16=1, else f32)"),
                     cl::cat(execution)};
  cl::opt<bool> autoFindBatchSize{
      "auto_find_batch_size",
      cl::desc("train with the largest per-device batch, up to "
               "--per_device_train_batch_size, whose step's planned peak "
               "fits --memory_budget, or without one the memory the "
               "machine has free for the backend (planned, not run: no "
               "out-of-memory trials)"),
      cl::cat(execution)};
  cl::opt<bool> fp16{"fp16",
                     cl::desc("mixed precision: matrix products in f16 with "
                              "f32 sums and dynamic loss scaling (PyTorch's "
                              "autocast + GradScaler: an overflow skips the "
                              "step and halves the scale); weights, "
                              "optimizer and loss stay f32 (default: "
                              "$KILN_FP16=1, else f32)"),
                     cl::cat(execution)};
  cl::opt<std::string> memoryBudget{
      "memory_budget",
      cl::desc("the process's peak memory, e.g. 8GiB (on --backend cuda "
               "the device's): a compiled step plans within it less what "
               "the process holds outside any step, recomputing "
               "activations if it must; one that cannot fails before it "
               "runs, naming its largest buffers"),
      cl::value_desc("bytes"), cl::cat(execution)};
  cl::opt<std::string> cacheDir{
      "kiln_cache_dir",
      cl::desc("kiln's persistent compile cache (default: $KILN_CACHE_DIR, "
               "if set)"),
      cl::value_desc("dir"), cl::cat(execution)};
  cl::opt<std::string> dumpGraphs{
      "dump_graphs",
      cl::desc("write every distinct graph and a manifest here, for "
               "kilnc precompile (default: $KILN_DUMP_GRAPHS)"),
      cl::value_desc("dir"), cl::cat(execution)};

  /// The Trainer's and run_clm's flags that kiln-train knows and does not
  /// act on: each refused with the reason, or taken with a note.
  UnsupportedFlags notActedOn;

  std::vector<const cl::OptionCategory *> categories() const {
    return {&model,       &data,      &training,
            &checkpoints, &execution, &notActedOn.category};
  }
  std::vector<const cl::opt<bool> *> booleans() const {
    std::vector<const cl::opt<bool> *> all = {&useLora,
                                              &useRslora,
                                              &mergeLora,
                                              &doTrain,
                                              &doEval,
                                              &dataloaderDropLast,
                                              &disableTqdm,
                                              &overwriteOutputDir,
                                              &eager,
                                              &tf32,
                                              &bf16,
                                              &fp16,
                                              &autoFindBatchSize,
                                              &loggingFirstStep,
                                              &includeNumInputTokensSeen,
                                              &saveSafetensors,
                                              &useCpu,
                                              &noCuda,
                                              &loadBestModelAtEnd,
                                              &evalOnStart,
                                              &greaterIsBetter,
                                              &keepLinebreaks};
    for (const cl::opt<bool> *flag : notActedOn.booleans())
      all.push_back(flag);
    return all;
  }
};

} // namespace kiln::train

#endif // KILN_EXAMPLES_TRAINFLAGS_H
