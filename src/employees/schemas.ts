import { z } from 'zod';

/**
 * Response and request schemas of the UK employee data interface. The specification lists only some
 * fields of each record ("Full field list ... not shown"), so every object is loose: the documented
 * fields are typed, every other field is kept as received (never drop data we were given).
 *
 * Where the specification documents a type we enforce it: a record that breaks it fails the whole
 * pull with a typed error naming the record and field, and the cache keeps its previous contents.
 */

/** Optional in practice: a record may omit a documented field or send null. */
const opt = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/**
 * "Number" fields of the accrual record arrive as numbers, but the rule for non-flexible employees
 * says the calculation fields are set to "0" (a string), so numeric strings are accepted too.
 */
export const numeric = z.union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?$/, 'expected a number')]);

/** Employee numbers are strings in the request; a service may send them as numbers in responses. */
const employeeNumber = z.union([z.string(), z.number().int()]).transform((v) => String(v));

export const EmployeeRecordSchema = z.looseObject({
  EmployeeID: z.number().int(),
  IR35: opt(z.boolean()),
  IsEmployeeFurlough: opt(z.boolean()),
  FurLoughContractHours: opt(z.number()),
  // Not in the specification's field list but present in the POST element and referenced by
  // ReportsToEmployeeNumber, so a real record carries it (the field name is configurable).
  EmployeeNumber: opt(employeeNumber),
});
export type EmployeeRecord = z.infer<typeof EmployeeRecordSchema>;

export const EmploymentRecordSchema = z.looseObject({
  EmployeeID: opt(z.number().int()),
  IR35: opt(z.boolean()),
  ReportsTo: opt(z.string()),
  ReportsToEmployeeNumber: opt(employeeNumber),
  ReportsToFAID: opt(z.union([z.string(), z.number()]).transform((v) => String(v))),
});
export type EmploymentRecord = z.infer<typeof EmploymentRecordSchema>;

export const DivisionRecordSchema = z.looseObject({
  DivisionId: z.number().int(),
  DivisionName: z.string(),
  AccountingSystemCode: opt(z.string()),
  DivisionGUID: opt(z.string()),
});
export type DivisionRecord = z.infer<typeof DivisionRecordSchema>;

export const EmployeeSourceRecordSchema = z.looseObject({
  SourceDescription: z.string(),
});
export type EmployeeSourceRecord = z.infer<typeof EmployeeSourceRecordSchema>;

export const LocationRecordSchema = z.looseObject({
  LocationID: z.number().int(),
  Description: z.string(),
  Country: opt(z.string()),
  Area: opt(z.string()),
  AccountingSystemCode: opt(z.string()),
  LocationGUID: opt(z.string()),
});
export type LocationRecord = z.infer<typeof LocationRecordSchema>;

export const AccrualRecordSchema = z.looseObject({
  EmployeeID: z.number().int(),
  ElementName: opt(z.string()),
  ElementType: opt(z.string()),
  StartDateTime: opt(z.string()),
  Units: numeric,
  UnitType: opt(z.string()),
  IsFlexible: opt(z.string()),
  AvgSummary: opt(numeric),
  AvgTime: opt(numeric),
  AvgDays: opt(numeric),
  DayRate: opt(numeric),
});
export type AccrualRecord = z.infer<typeof AccrualRecordSchema>;

/** Every listing endpoint answers with a JSON array of its records. */
export const arrayOf = <T extends z.ZodType>(record: T) => z.array(record);

/** The request element of POST Employees: the documented fields typed loosely (validation.ts checks the rules). */
export const EmployeePostElementSchema = z.looseObject({
  EmployeeNumber: z.string(),
  SettledStatus: z.string().optional(),
  SettledStatusShareCode: z.string().optional(),
  PreSettledStatus: z.string().optional(),
  PreSettledStatusExpiryDate: z.string().optional(),
  TemporaryLeaveToRemain: z.string().optional(),
  TemporaryLeaveToRemainExpiryDate: z.string().optional(),
});
export type EmployeePostElement = z.infer<typeof EmployeePostElementSchema>;

/** Section 8 of the specification. */
export const LIMITS = {
  ReportsTo: 99,
  AccountingSystemCode: 10,
  LocationDescription: 50,
  SourceDescription: 40,
  SettledStatusShareCodeDigits: 20,
} as const;
