// JSON Schema 2020-12 validation of tool results against the outputSchema the server lists.
import assert from 'node:assert/strict';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export function makeAjv() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  return ajv;
}

export class OutputValidator {
  constructor(tools) {
    this.ajv = makeAjv();
    this.validators = new Map();
    for (const t of tools) {
      if (t.outputSchema) this.validators.set(t.name, this.ajv.compile(t.outputSchema));
    }
  }

  /**
   * A successful tool result: structuredContent validates against the tool's outputSchema and
   * equals JSON.parse of the (single) text content block.
   */
  checkOk(name, result) {
    assert.ok(result, `${name}: no result`);
    const text = textOf(result);
    assert.notEqual(result.isError, true, `${name} returned isError: ${text}`);
    const validate = this.validators.get(name);
    assert.ok(validate, `${name}: no outputSchema listed`);
    assert.ok(result.structuredContent && typeof result.structuredContent === 'object', `${name}: no structuredContent`);
    const ok = validate(result.structuredContent);
    assert.ok(ok, `${name}: structuredContent does not validate against outputSchema: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(result.structuredContent).slice(0, 2000)}`);
    assert.ok(text !== undefined, `${name}: no text content`);
    assert.deepEqual(JSON.parse(text), result.structuredContent, `${name}: text content differs from structuredContent`);
    return result.structuredContent;
  }

  /**
   * request_step answered to a run token, as a permission layer (Claude Code's
   * --permission-prompt-tool) takes it: no structuredContent, exactly one text block holding the
   * JSON, which validates against the seed outputSchema an agent token's tools/list carries.
   */
  checkPermissionAnswer(name, result) {
    assert.ok(result, `${name}: no result`);
    assert.notEqual(result.isError, true, `${name} returned isError: ${textOf(result)}`);
    assert.equal(result.structuredContent, undefined, `${name}: a run token's answer carries no structuredContent`);
    assert.equal(result.content?.length, 1, `${name}: exactly one content block, got ${JSON.stringify(result.content)}`);
    assert.equal(result.content[0].type, 'text', `${name}: the block is text`);
    assert.equal(typeof result.content[0].text, 'string');
    const parsed = JSON.parse(result.content[0].text);
    const validate = this.validators.get(name);
    assert.ok(validate, `${name}: no outputSchema listed (build the validator from an agent token's tools/list)`);
    assert.ok(validate(parsed), `${name}: text does not validate against outputSchema: ${this.ajv.errorsText(validate.errors)}`);
    return parsed;
  }
}

/** A run token's tools/list: request_step without outputSchema, every other tool with one. */
export function checkRunToolList(tools) {
  for (const t of tools) {
    if (t.name === 'request_step') assert.equal(t.outputSchema, undefined, 'a run token sees request_step without outputSchema');
    else assert.ok(t.outputSchema, `${t.name}: outputSchema listed for a run token`);
  }
}

export function textOf(result) {
  const block = (result?.content || []).find((c) => c.type === 'text');
  return block?.text;
}

/**
 * A domain refusal: isError true, with a message that contains each of `mustMention`
 * (e.g. the task's state), case-insensitively.
 */
export function checkRefused(name, result, mustMention = []) {
  const text = textOf(result) ?? '';
  assert.equal(result?.isError, true, `${name}: expected isError, got ${JSON.stringify(result).slice(0, 800)}`);
  for (const m of [].concat(mustMention)) {
    assert.ok(text.toLowerCase().includes(String(m).toLowerCase()), `${name}: refusal message should mention "${m}": ${text}`);
  }
  return text;
}
