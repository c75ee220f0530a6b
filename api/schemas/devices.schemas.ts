import { z } from './zod.js';
import { isoDateTime, stringMap, usageFields } from './common.schemas.js';
import { emailSchema } from './groups-users.schemas.js';
import { DEVICE_ID_MAX_LENGTH, DEVICE_ID_PATTERN } from '../../core/model/device.js';

const phone = z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be a phone number in international form, e.g. +34600111222');

export const deviceIdSchema = z
  .string()
  .min(1)
  .max(DEVICE_ID_MAX_LENGTH)
  .regex(DEVICE_ID_PATTERN, 'may hold only letters, digits and _ . : -');

const modelSchema = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .openapi({
    description:
      "ext: the tracker's model as its maker names it (any case for GT06), e.g. `FMB920`, `VL103`, `MV710G`; absent or null: none. " +
      'The gateway decodes the frames of Teltonika, GT06 and JT808 devices with it, because there the model decides ' +
      'which codes mean which alarm and how some frames are laid out (e.g. Teltonika FMB models report a crash ' +
      '(IO 247) as an `Accident` alert only when the model names an FM device; a GT06 alarm code 0x09 is `Tow` on a ' +
      'VL103 and `Vibration` otherwise). No tracker reports its model, so it is set here.',
  });

/** A decoder setting's name: Traccar's setter without `set`, first letter lower case (`custom`, `longDate`). */
export const PROTOCOL_OPTION_NAME = /^[a-z][A-Za-z0-9]{0,39}$/;
export const PROTOCOL_OPTIONS_MAX = 32;

const protocolOptionsSchema = z
  .record(
    z.string().regex(PROTOCOL_OPTION_NAME, 'a setting name is a letter a-z, then up to 39 letters and digits'),
    z.union([z.string().max(1000), z.number(), z.boolean()]).transform(String),
  )
  .refine((o) => Object.keys(o).length <= PROTOCOL_OPTIONS_MAX, {
    message: `at most ${PROTOCOL_OPTIONS_MAX} settings`,
  })
  .openapi({
    description:
      'ext: decoder settings of the device, by name, as the reference platform reads them from its configuration ' +
      "(its decoder setter without `set`, first letter lower case). The gateway decodes the device's frames with them. " +
      "ATrack: `custom` (true/false: reports carry the custom form's fields), `form` (the `%XX` field codes of the " +
      'custom form, e.g. `%AT%BV%MV`), `longDate` (true/false). Navtelecom: `flexDataSize`. Other names a protocol ' +
      'reads are listed in docs/protocols.md "Device settings"; a protocol ignores names it does not read. ' +
      'Numbers and booleans are kept as text. Absent on create or PUT: none.',
    example: { custom: 'true', form: '%AT%BV%MV' },
  });

const deviceWritable = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  min: z.string().max(40).nullable().optional().openapi({ description: "The device's phone number." }),
  tags: stringMap.optional(),
  expires: isoDateTime
    .nullable()
    .optional()
    .openapi({ description: 'When the device expires; null: never (the "Expires" toggle off).' }),
  dailyEmailLimit: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .openapi({ description: 'E-mails the device may send per day (default 10).' }),
  dailySmsLimit: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .openapi({ description: 'SMS the device may send per day (default 10).' }),
  alertEmails: z
    .array(emailSchema)
    .max(50)
    .optional()
    .openapi({ description: "ext: addresses that receive this device's alert e-mails." }),
  alertPhones: z.array(phone).max(50).optional().openapi({ description: 'ext: numbers that receive its alert SMS.' }),
  model: modelSchema.nullable().optional(),
  protocolOptions: protocolOptionsSchema.optional(),
  mqttPassword: z
    .string()
    .min(8)
    .max(200)
    .nullable()
    .optional()
    .openapi({ description: 'ext, write-only: the password the device uses for MQTT.' }),
};

export const deviceCreateSchema = z.object({ id: deviceIdSchema, ...deviceWritable }).openapi('DeviceCreate');
export const deviceUpdateSchema = z
  .object({ id: deviceIdSchema.optional(), ...deviceWritable })
  .openapi('DeviceUpdate');

export const deviceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    min: z.string().nullable(),
    tags: stringMap,
    expires: z.string().nullable(),
    dailyEmailLimit: z.number().int(),
    dailySmsLimit: z.number().int(),
    emailsSentToday: z.number().int(),
    smsSentToday: z.number().int(),
    expired: z.boolean().openapi({ description: 'ext, read-only.' }),
    protocol: z.string().nullable().openapi({ description: 'ext, read-only: protocol of the last connection.' }),
    lastConnection: z.string().nullable().openapi({ description: 'ext, read-only.' }),
    model: modelSchema.nullable(),
    protocolOptions: z
      .record(z.string(), z.string())
      .openapi({ description: 'ext: the decoder settings (see DeviceCreate).' }),
    creation: z.string(),
    alertEmails: z.array(z.string()),
    alertPhones: z.array(z.string()),
    groups: z.array(z.string()).openapi({ description: 'ext, read-only: ids of the groups holding the device.' }),
    totalDistance: z.number().openapi({
      description:
        'ext, read-only: km the device travelled, computed by trackgate from its positions (invalid fixes, jumps and jitter while stopped not counted; see docs/rest.md "Distance"); 0 before its first position.',
    }),
  })
  .openapi('Device');

export const devicesListQuery = z.object({
  status: z
    .enum(['active', 'expired', 'all'])
    .optional()
    .openapi({ description: 'ext: which devices (default active).' }),
});

export const devicesResponse = z.object({ success: z.literal(true), devices: z.array(deviceSchema), ...usageFields });
export const deviceResponse = z.object({ success: z.literal(true), device: deviceSchema, ...usageFields });
