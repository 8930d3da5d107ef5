import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { INVENTORY_FIELDS, normalizeRecord } from '../../src/erp/fields.js';
import { formatIssue, StoreSyncError, ValidationError } from '../../src/errors.js';
import { validateInventoryUpdate } from '../../src/store/validation.js';
import { specViolations } from '../helpers/inventory-oracle.js';

const FIELD_NAMES = Object.keys(INVENTORY_FIELDS);

/** Values an ERP driver or a CSV cell can hand over: numbers of every kind, numeric and junk text, nulls, objects. */
const erpValue = fc.oneof(
  fc.integer({ min: -2_000_000, max: 2_000_000 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 0, 0.001, 0.01, 999999.99, 1e21, Number.MAX_SAFE_INTEGER + 2),
  fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
  fc.stringMatching(/^[+-]?\d{0,8}([.,]\d{0,4})?$/),
  fc.constantFrom('1.234,56', '12abc', ' 42 ', '', '   ', 'true', 'si', 'NaN', '1e5', '0x1F', '\u0000', 'Ñandú ü'),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: false }),
  fc.array(fc.record({ Key: fc.string(), Value: fc.oneof(fc.string(), fc.integer()) }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
  fc.json(),
);

/** A column name: a catalogue field in any letter case, or a column the catalogue does not know. */
const column = fc.oneof(
  fc.constantFrom(...FIELD_NAMES).chain((name) =>
    fc.constantFrom(name, name.toLowerCase(), name.toUpperCase()),
  ),
  fc.constantFrom('cursor', '__proto__', 'constructor', 'toString', 'Artículo', ''),
  fc.string({ maxLength: 12 }),
);

const erpRow = fc.dictionary(column, erpValue, { maxKeys: 10 });

/** The type a normalized field must have, by catalogue type. */
function hasCatalogueType(field: string, value: unknown): boolean {
  const spec = INVENTORY_FIELDS[field];
  if (!spec) return false;
  if (value === null) return spec.nullable === true;
  switch (spec.type) {
    case 'string':
      return typeof value === 'string';
    case 'int':
      return Number.isSafeInteger(value);
    case 'decimal':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bool':
      return typeof value === 'boolean';
    case 'properties':
    case 'objectList':
      return Array.isArray(value);
  }
}

describe('ERP rows of any shape', () => {
  it('normalize to typed catalogue fields or to issues naming field, value and rule, never throwing', () => {
    fc.assert(
      fc.property(erpRow, fc.boolean(), (row, decimalComma) => {
        const result = normalizeRecord(row, INVENTORY_FIELDS, { ref: 'fuzz row 1', decimalComma });
        if ('fields' in result) {
          for (const [field, value] of Object.entries(result.fields)) {
            expect(hasCatalogueType(field, value), `${field} = ${String(value)}`).toBe(true);
          }
          expect(typeof result.fields.Code).toBe('string');
        } else {
          expect(result.issues.length).toBeGreaterThan(0);
          for (const issue of result.issues) {
            expect(FIELD_NAMES).toContain(issue.field);
            expect(issue.rule).toMatch(/\S/);
            expect(typeof issue.record).toBe('string');
            expect(formatIssue(issue)).toContain(`field ${issue.field}`);
          }
          const error = new ValidationError(result.issues, 'fuzz row 1');
          expect(error).toBeInstanceOf(StoreSyncError);
          expect(error.code).toBe('ERR_VALIDATION');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('pass the store validation only when every field keeps the spec rules', () => {
    // Rows with a Code and catalogue columns, so that most of them normalize and reach the validation (the rows of
    // the first property rarely do); values on both sides of the range rules.
    const catalogueRow = fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 20 }),
        fc.dictionary(
          fc.constantFrom(...FIELD_NAMES.filter((name) => name !== 'Code')),
          fc.oneof(
            fc.integer({ min: -10, max: 2_000_000 }),
            fc.double({ min: -1, max: 2_000_000, noNaN: true }),
            fc.boolean(),
            fc.constant(null),
            fc.string({ maxLength: 10 }),
          ),
          { maxKeys: 6 },
        ),
      )
      .map(([code, rest]) => ({ ...rest, Code: code }));
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(catalogueRow, (row) => {
        const result = normalizeRecord(row, INVENTORY_FIELDS, { ref: 'fuzz row 2' });
        fc.pre('fields' in result);
        if (!('fields' in result)) return;
        const item = { InternalId: 0, ...result.fields };
        const issues = validateInventoryUpdate(item);
        if (issues.length === 0) {
          valid += 1;
          expect(specViolations(item)).toEqual([]);
        } else {
          // The validation may be stricter than the spec's table (it also wants cents), never looser.
          invalid += 1;
        }
        for (const issue of issues) {
          expect(issue.field).toMatch(/\S/);
          expect(issue.rule).toMatch(/\S/);
        }
      }),
      { numRuns: 2000 },
    );
    // Both outcomes were seen often enough for the property to mean something.
    expect(valid).toBeGreaterThan(100);
    expect(invalid).toBeGreaterThan(100);
  });

  it('report each field that breaks a range rule by name, with its value', () => {
    const broken = fc.oneof(
      fc.record({ field: fc.constant('Stock'), value: fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: 1_000_000 }), fc.double({ min: 0.1, max: 10, noInteger: true })) }),
      fc.record({ field: fc.constantFrom('Price', 'OfferPrice'), value: fc.oneof(fc.constant(0), fc.double({ max: 0.0099, noNaN: true }), fc.double({ min: 1_000_000, noNaN: true })) }),
      fc.record({ field: fc.constant('Taxes'), value: fc.oneof(fc.double({ max: -0.001, noNaN: true }), fc.double({ min: 100.001, noNaN: true })) }),
      fc.record({ field: fc.constant('InternalId'), value: fc.integer({ min: 1 }) }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Z]{3}-\d{4}$/), broken, (code, { field, value }) => {
        const issues = validateInventoryUpdate({ InternalId: 0, Code: code, [field]: value });
        const issue = issues.find((i) => i.field === field);
        expect(issue, `${field} = ${value}`).toBeDefined();
        expect(issue?.value).toBe(value);
        expect(issue?.record).toBe(code);
        expect(issue?.rule).toMatch(/\S/);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuse any non-object body, never throwing', () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        const issues = validateInventoryUpdate(input);
        if (issues.length === 0) expect(specViolations(input)).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });
});
