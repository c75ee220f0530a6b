import { z } from './zod.js';
import { isoDateTime, stringMap, usageFields } from './common.schemas.js';
import { MAX_PATCH_OPS } from '../patch.js';

export const groupInputSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).nullable().optional(),
    devices: z.array(z.string().min(1).max(64)).max(100_000).optional(),
  })
  .openapi('GroupInput');

export const groupFields = {
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  devices: z.array(z.string()),
  creation: z.string(),
  lastModified: z.string(),
};
export const groupSchema = z.object(groupFields).openapi('Group');
export const groupResponse = z
  .object({ success: z.literal(true), ...groupFields, ...usageFields })
  .openapi('GroupResponse');
export const groupsResponse = z.object({ success: z.literal(true), groups: z.array(groupSchema), ...usageFields });

export const privilegeSchema = z.enum(['admin', 'write', 'execute', 'read']);

/** An e-mail address: something@somewhere. Local names such as admin@localhost are addresses too. */
export const emailSchema = z
  .string()
  .max(320)
  .regex(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address');

/**
 * Privileges as an array, or as one string, comma-separated for several ("read,write"), as
 * clients written for the platform send them; stored as an array without repeats.
 */
const privilegesInput = z
  .union([z.array(z.string().max(100)).max(10), z.string().max(200)])
  .transform((v) => [
    ...new Set(
      (Array.isArray(v) ? v : [v])
        .flatMap((p) => p.split(','))
        .map((p) => p.trim().toLowerCase())
        .filter(Boolean),
    ),
  ])
  .pipe(z.array(privilegeSchema));

export const userInputSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    email: emailSchema,
    country: z.string().min(2).max(100).openapi({
      description:
        'ISO 3166-1 alpha-2, see /api/users/countries; an alpha-3 code ("USA") or an English name is accepted too and stored as alpha-2.',
    }),
    timeZone: z.string().min(1).max(64).openapi({ description: 'IANA id, see /api/users/timeZones.' }),
    userName: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: 'ext: login for the token endpoint (default: the e-mail).' }),
    description: z.string().max(2000).nullable().optional(),
    message: z.string().max(2000).nullable().optional(),
    disabled: z.boolean().optional(),
    disabledMessage: z.string().max(2000).nullable().optional(),
    tags: stringMap.optional(),
    privileges: privilegesInput.optional().openapi({
      description:
        'admin, write, execute (send commands to devices), read (default ["read"]); an array, or one string, comma-separated for several ("read,write"). An empty list gives no access at all.',
    }),
    group: z.string().max(200).nullable().optional().openapi({
      description:
        "Restricts the user to this group's devices: the group's id, or its name when no other group of the account has it.",
    }),
    from: isoDateTime.nullable().optional(),
    expires: isoDateTime.nullable().optional(),
    password: z
      .string()
      .min(8)
      .max(200)
      .nullable()
      .optional()
      .openapi({ description: 'Write-only; read back as null.' }),
  })
  .openapi('UserInput');

export const userFields = {
  id: z.string(),
  userName: z.string(),
  name: z.string(),
  email: z.string(),
  country: z.string(),
  timeZone: z.string(),
  description: z.string().nullable(),
  message: z.string().nullable(),
  disabled: z.boolean(),
  disabledMessage: z.string().nullable(),
  tags: stringMap,
  privileges: z.array(privilegeSchema),
  group: z.string().nullable(),
  from: z.string().nullable(),
  expires: z.string().nullable(),
  password: z.null(),
  creation: z.string(),
  modification: z.string(),
  lastLogin: z.string().nullable(),
};
export const userSchema = z.object(userFields).openapi('User');
export const userResponse = z
  .object({
    success: z.literal(true),
    ...userFields,
    apiKey: z.string().optional().openapi({ description: 'ext: returned once, when created or reissued.' }),
    ...usageFields,
  })
  .openapi('UserResponse');
export const usersResponse = z.object({ success: z.literal(true), users: z.array(userSchema), ...usageFields });

export const jsonPatchSchema = z
  .array(
    z.object({
      op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
      path: z.string(),
      value: z.unknown().optional(),
      from: z.string().optional(),
    }),
  )
  .max(MAX_PATCH_OPS, { message: `a patch has at most ${MAX_PATCH_OPS} operations` })
  .openapi('JsonPatch', {
    description:
      `RFC 6902 JSON Patch, applied to the resource as GET shows it, then checked as PUT checks it. At most ${MAX_PATCH_OPS} operations (400 otherwise). ` +
      'The values that `add`, `replace`, `copy` and `move` operations place add up to at most TRACKGATE_BODY_LIMIT bytes of JSON (default 1 MiB; a copied or moved value counts at its size where it is taken), ' +
      'so the patched document is at most that much larger than the one GET shows: past it, 413 PAYLOAD_TOO_LARGE names the operation (`details.field` `[i]`) and the limit (`details.limitBytes`), and nothing is changed.',
  });

export const countriesResponse = z.object({
  success: z.literal(true),
  countries: z.record(z.string(), z.string()),
  ...usageFields,
});
export const timeZonesResponse = z.object({
  success: z.literal(true),
  timeZones: z.record(z.string(), z.string()),
  ...usageFields,
});
