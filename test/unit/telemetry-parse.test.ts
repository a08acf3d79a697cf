import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseServerMetrics } from '../../src/main/telemetry/metrics-scraper';
import { NVML_FAILURE, parseComputeAppLine, parseGpuLine } from '../../src/main/telemetry/nvidia-smi-parse';
import { readAmdSmiDocument } from '../../src/main/telemetry/amd-smi-parse';

// Fixtures constructed from nvidia-smi's documented format, not captured on a GPU (see test/fixtures/nvidia-smi/README.md).
const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'nvidia-smi', name), 'utf8');

describe('nvidia-smi parsing', () => {
  it('reads one GPU line into a sample with units stripped', () => {
    expect(parseGpuLine(fixture('one-gpu.csv').trim(), 12.5)).toEqual({
      t: 12.5,
      index: 0,
      uuid: 'GPU-5f1b2c3d-0000-4000-8000-000000000001',
      name: 'NVIDIA GeForce RTX 4090',
      memoryUsedMib: 5120,
      memoryTotalMib: 24564,
      utilizationPct: 87,
      memoryUtilizationPct: 41,
      temperatureC: 63,
      powerW: 250.5,
      smClockMhz: 2520,
      pstate: 'P2',
      memClockMhz: 10501,
      throttleReasons: 0,
    });
  });

  it('reads several GPUs and turns [N/A] and [Not Supported] into null, never 0', () => {
    const [first, second] = fixture('several-gpus.csv')
      .trim()
      .split('\n')
      .map((line) => parseGpuLine(line, 0));
    expect(first?.index).toBe(0);
    expect(second).toMatchObject({
      index: 1,
      memoryUsedMib: 512,
      utilizationPct: null,
      memoryUtilizationPct: null,
      powerW: null,
      smClockMhz: null,
      pstate: 'P8',
    });
  });

  it('ignores headers, blank lines and driver messages, and recognises NVML failure', () => {
    expect(parseGpuLine('timestamp, index, uuid', 0)).toBeNull();
    expect(parseGpuLine('', 0)).toBeNull();
    expect(parseGpuLine('Failed to initialize NVML: Driver/library version mismatch', 0)).toBeNull();
    expect(NVML_FAILURE.test('Failed to initialize NVML: Driver/library version mismatch')).toBe(true);
    expect(NVML_FAILURE.test("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")).toBe(true);
  });

  it('reads per-process VRAM', () => {
    expect(parseComputeAppLine('4242, 300', 1)).toEqual({ t: 1, pid: 4242, usedMib: 300 });
    expect(parseComputeAppLine('4242, [N/A]', 1)).toEqual({ t: 1, pid: 4242, usedMib: null });
    expect(parseComputeAppLine('No running processes found', 1)).toBeNull();
  });

  it('reads amd-smi metric JSON (the constructed stand-in document)', () => {
    expect(readAmdSmiDocument(JSON.parse(fixture('amd-smi-metric.json')), 3).samples).toEqual([
      {
        t: 3,
        index: 0,
        uuid: null,
        name: null,
        memoryUsedMib: 3100,
        memoryTotalMib: 65520,
        utilizationPct: 73,
        memoryUtilizationPct: 40,
        temperatureC: 55,
        powerW: 180,
        smClockMhz: null,
        pstate: null,
        memClockMhz: null,
        throttleReasons: null,
      },
    ]);
    expect(readAmdSmiDocument('garbage', 0)).toEqual({ samples: [], notes: [] });
  });
});

describe('Prometheus metrics', () => {
  it('reads llama.cpp counters and gauges', () => {
    const text = [
      '# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.',
      '# TYPE llamacpp:prompt_tokens_total counter',
      'llamacpp:prompt_tokens_total 290',
      '# TYPE llamacpp:prompt_tokens_cached_total counter',
      'llamacpp:prompt_tokens_cached_total 699',
      '# TYPE llamacpp:tokens_predicted_total counter',
      'llamacpp:tokens_predicted_total 1056',
      '# TYPE llamacpp:requests_processing gauge',
      'llamacpp:requests_processing 2',
      '# TYPE llamacpp:requests_deferred gauge',
      'llamacpp:requests_deferred 0',
    ].join('\n');
    expect(parseServerMetrics(text, 5)).toEqual({
      t: 5,
      promptTokensTotal: 290,
      cachedPromptTokensTotal: 699,
      predictedTokensTotal: 1056,
      requestsProcessing: 2,
      requestsDeferred: 0,
    });
  });

  it('reads vLLM names and leaves unknown figures null', () => {
    const sample = parseServerMetrics('vllm:generation_tokens_total{model_name="m"} 40\nvllm:num_requests_running{model_name="m"} 3\n', 0);
    expect(sample).toMatchObject({ predictedTokensTotal: 40, requestsProcessing: 3, promptTokensTotal: null });
  });
});

describe('JSON document stream', () => {
  it('splits concatenated, pretty-printed documents across arbitrary chunk boundaries', async () => {
    const { JsonDocumentSplitter } = await import('../../src/main/telemetry/json-stream');
    const documents: unknown[] = [];
    const splitter = new JsonDocumentSplitter((document) => documents.push(document));
    const text = 'warning: x\n[\n {"a": "}]"}\n]\n{"b": [1, {"c": "\\"{"}]}\n';
    for (let i = 0; i < text.length; i += 3) splitter.write(text.slice(i, i + 3));
    expect(documents).toEqual([[{ a: '}]' }], { b: [1, { c: '"{' }] }]);
  });
});
