// Query parameters read as apimachinery's parameter codec reads them (Convert_Slice_string_To_bool/_int64).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGoInt64, parseGoUint64, queryBool, queryInt, queryOptionalBool } from './query-params.js';

test('booleans: absent, 0 and false in any case are false; anything else, even empty or f, is true', () => {
  const q = (s: string): URLSearchParams => new URLSearchParams(s);
  for (const v of ['0', 'false', 'False', 'FALSE', 'fAlSe']) assert.equal(queryBool(q(`watch=${v}`), 'watch'), false, v);
  for (const v of ['true', 'True', '1', '', 'f', 'no', 'yes']) assert.equal(queryBool(q(`watch=${v}`), 'watch'), true, v);
  assert.equal(queryBool(q(''), 'watch'), false);
  assert.equal(queryBool(q('watch=False&watch=true'), 'watch'), false, 'the first value counts');
  assert.equal(queryOptionalBool(q(''), 'sendInitialEvents'), undefined);
  assert.equal(queryOptionalBool(q('sendInitialEvents=True'), 'sendInitialEvents'), true);
});

test('integers: strconv.ParseInt base 10, with its error text', () => {
  assert.equal(queryInt(new URLSearchParams('limit=%2B5'), 'limit'), 5);
  assert.equal(queryInt(new URLSearchParams('limit=-3'), 'limit'), -3);
  assert.equal(queryInt(new URLSearchParams(''), 'limit'), undefined);
  assert.throws(() => queryInt(new URLSearchParams('limit='), 'limit'), { message: 'strconv.ParseInt: parsing "": invalid syntax', code: 'ERR_INVALID_ARGUMENT' });
  assert.throws(() => parseGoInt64('1.5'), { message: 'strconv.ParseInt: parsing "1.5": invalid syntax' });
  assert.throws(() => parseGoInt64('0x10'), { message: 'strconv.ParseInt: parsing "0x10": invalid syntax' });
  assert.throws(() => parseGoInt64('9223372036854775808'), { message: 'strconv.ParseInt: parsing "9223372036854775808": value out of range' });
  assert.equal(parseGoUint64('42'), 42);
  assert.throws(() => parseGoUint64('-1'), { message: 'strconv.ParseUint: parsing "-1": invalid syntax' });
});
