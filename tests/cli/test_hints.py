import pytest

from gacc_hf.cli import main

HINTS = {
    ("--device", "cuda"): "--device is lm-eval's; did you mean the device option of a method: --reader "
    "'smollm2?device=cuda:0' (several GPUs: --num-processes N)?",
    ("--output_path", "runs/x"): "--output_path is lm-eval's; did you mean --output-dir?",
    ("--output_path=runs/x",): "--output_path is lm-eval's; did you mean --output-dir?",
    ("--batch_size", "4"): "--batch_size: did you mean --batch-size?",
    ("--tasks", "gacc"): "--tasks is lm-eval's; did you mean --data (sample, sample:zh, a file, a Hub id) or --preset?",
    ("--model_args=pretrained=x,dtype=float32",): "--model_args is lm-eval's; did you mean options after the "
    "method's name: --reader 'smollm2?device=cuda&dtype=bfloat16'?",
    ("--cache_dir", "c"): "--cache_dir: did you mean --cache-dir?",
}


@pytest.mark.parametrize("argv", list(HINTS), ids=[a[0].split("=")[0] for a in HINTS])
def test_an_lm_eval_flag_gets_the_gacc_option_that_does_its_job(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", *argv])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert info.value.code == 2
    assert err == f"gacc: error: unrecognized arguments: {' '.join(argv)}; {HINTS[argv]}"


def test_an_option_with_no_counterpart_gets_argparse_s_message_alone(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--nope", "1"])
    assert capsys.readouterr().err.strip().splitlines()[-1] == "gacc: error: unrecognized arguments: --nope 1"


def test_lm_eval_s_limit_is_told_apart_from_ours(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--limit", "2.5"])
    err = capsys.readouterr().err
    assert "got 2.5 (unlike lm-eval's --limit, which counts examples, this counts groups" in err
