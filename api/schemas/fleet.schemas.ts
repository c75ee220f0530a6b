import { z } from './zod.js';
import { usageFields } from './common.schemas.js';
import { locationSchema } from './locations.schemas.js';
import { deviceCreateSchema } from './devices.schemas.js';

export const lastLocationsQuery = z.object({
  groupId: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: "Only this group's devices (404 GROUP_NOT_FOUND for a group the caller cannot see)." }),
});

const fleetEntrySchema = z
  .object({
    deviceId: z.string(),
    name: z.string(),
    status: z.enum(['online', 'offline', 'expired']).openapi({
      description:
        '`online`: a live connection (TCP, MQTT), or a datagram/HTTP report or a connection on another instance within the idle timeout; `expired`: the device has expired; `offline` otherwise.',
    }),
    transport: z
      .enum(['tcp', 'udp', 'mqtt', 'http'])
      .optional()
      .openapi({ description: 'ext, online devices only: how the device reaches trackgate now.' }),
    lastSeen: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: 'offline devices only: when the device was last heard (null: never).' }),
    lastLocation: locationSchema.nullable().openapi({ description: 'The last location; null while it has none.' }),
  })
  .openapi('FleetEntry');

export const lastLocationsResponse = z.object({
  success: z.literal(true),
  lastLocations: z.array(fleetEntrySchema),
  ...usageFields,
});

/** One row of an import: a device as POST /api/devices takes it, and the ids of groups to put it in. */
export const importRowSchema = deviceCreateSchema
  .extend({ groups: z.array(z.string().min(1).max(64)).max(100).optional() })
  .openapi('DeviceImportRow');

export const importResponse = z.object({
  success: z.literal(true),
  created: z.array(z.string()).openapi({ description: 'Ids of the devices created, in row order.' }),
  refused: z
    .array(
      z.object({
        row: z.number().int().openapi({ description: '1 = the first data row (JSON: the first element).' }),
        id: z.string().nullable(),
        code: z.string().openapi({
          description:
            'VALIDATION_FAILED, DEVICE_EXISTS (taken, or earlier in the file), GROUP_NOT_FOUND, NO_LICENSE_AVAILABLE',
        }),
        error: z.string(),
      }),
    )
    .openapi({ description: 'The rows not created and why, in row order.' }),
  ...usageFields,
});
