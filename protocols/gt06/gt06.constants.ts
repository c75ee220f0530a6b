import type { Alarm } from '../../core/model/alarm.js';

/**
 * GT06 / Concox / Jimi protocol numbers. Names and comments follow Traccar's
 * `Gt06ProtocolDecoder.java` (the device family each one was added for is in the comment).
 */
export const PROTOCOL = 'gt06';

export const MSG_LOGIN = 0x01; // login, GT06 protocol manual 5.1
export const MSG_GPS = 0x10; // GPS only
export const MSG_GPS_LBS_6 = 0x11; // GPS + LBS, 4-byte cell id
export const MSG_GPS_LBS_1 = 0x12; // GPS + LBS, GT06 protocol manual 5.2
export const MSG_STATUS = 0x13; // status / heartbeat, GT06 protocol manual 5.4
export const MSG_SATELLITE = 0x14;
export const MSG_STRING = 0x15; // command response (ASCII), GT06 protocol manual 5.5
export const MSG_GPS_LBS_STATUS_1 = 0x16; // alarm: GPS + LBS + status, GT06 protocol manual 5.3
export const MSG_WIFI = 0x17; // Wi-Fi (BCD time)
export const MSG_GPS_LBS_RFID = 0x17; // GPS + LBS + RFID (length 0x28)
export const MSG_LBS_EXTEND = 0x18;
export const MSG_LBS_STATUS = 0x19;
export const MSG_GPS_PHONE = 0x1a;
export const MSG_GPS_LBS_EXTEND = 0x1e; // JI09
export const MSG_STRING_INFO = 0x21; // 0x7979 string information
export const MSG_GPS_LBS_2 = 0x22; // GPS + LBS + ACC/upload mode/re-upload
export const MSG_HEARTBEAT = 0x23; // GK310
export const MSG_LBS_MULTIPLE_3 = 0x24;
export const MSG_GPS_LBS_DRIVER = 0x25; // XT40
export const MSG_GPS_LBS_STATUS_2 = 0x26;
export const MSG_GPS_LBS_STATUS_3 = 0x27;
export const MSG_LBS_MULTIPLE_1 = 0x28;
export const MSG_ADDRESS_REQUEST = 0x2a; // GK310
export const MSG_LBS_WIFI = 0x2c;
export const MSG_GPS_LBS_4 = 0x2d;
export const MSG_LBS_MULTIPLE_2 = 0x2e;
export const MSG_GPS_LBS_5 = 0x31; // AZ735 & SL4X
export const MSG_GPS_LBS_STATUS_4 = 0x32; // AZ735 & SL4X (0x7878)
export const MSG_AZ735_GPS = 0x32; // AZ735 (0x7979)
export const MSG_WIFI_5 = 0x33; // AZ735 & SL4X (0x7878)
export const MSG_AZ735_ALARM = 0x33; // AZ735 (0x7979)
export const MSG_X1_GPS = 0x34;
export const MSG_LBS_3 = 0x34; // SL4X
export const MSG_X1_PHOTO_INFO = 0x35;
export const MSG_X1_PHOTO_DATA = 0x36; // 0x7979
export const MSG_STATUS_2 = 0x36; // Jimi IoT 4G heartbeat with modules (0x7878)
export const MSG_LOCATION_RFID = 0x36; // VL103 GPS + LBS + RFID (0x7878)
export const MSG_GPS_LBS_3 = 0x37;
export const MSG_GPS_LBS_8 = 0x38; // 0x7979, cell type prefixed LBS
export const MSG_ALARM_MODULE = 0x39; // Jimi IoT 4G
export const MSG_BMS = 0x40; // WD-209
export const MSG_MULTIMEDIA = 0x41; // WD-209
export const MSG_IBUTTON = 0x61;
export const MSG_DTC = 0x65; // FM08ABC
export const MSG_PID = 0x66; // FM08ABC
export const MSG_WIFI_2 = 0x69;
export const MSG_GPS_MODULAR = 0x70; // 0x7979 modules
export const MSG_COMMAND_0 = 0x80;
export const MSG_COMMAND_1 = 0x81;
export const MSG_COMMAND_2 = 0x82;
export const MSG_TIME_REQUEST = 0x8a; // GK310
export const MSG_OBD = 0x8c; // FM08ABC
export const MSG_INFO = 0x94; // information transmission
export const MSG_ALARM = 0x95; // JC100 / JC400
export const MSG_ADDRESS_RESPONSE = 0x97; // GK310
export const MSG_SERIAL = 0x9b; // external device transparent data
export const MSG_GPS_LBS_7 = 0xa0; // GK310 & JM-VL03
export const MSG_LBS_2 = 0xa1; // GK310
export const MSG_WIFI_3 = 0xa2; // GK310
export const MSG_GPS_LBS_STATUS_5 = 0xa2; // LWxG (length 0x40)
export const MSG_FENCE_SINGLE = 0xa3; // GK310
export const MSG_STATUS_3 = 0xa3; // GL21L / SEEWORLD (length 0x0c)
export const MSG_FENCE_MULTI = 0xa4; // GK310 & JM-LL301
export const MSG_LBS_ALARM = 0xa5; // GK310 & JM-LL301
export const MSG_LBS_ADDRESS = 0xa7; // GK310
export const MSG_WIFI_ALARM = 0xa9; // Jimi IoT 4G
export const MSG_BLUETOOTH_CLOCK = 0xb2; // Jimi IoT 4G
export const MSG_DEVICE_STATUS = 0xf1; // Jimi IoT 4G
export const MSG_PERIPHERAL = 0xf2; // VL842
export const MSG_WIFI_4 = 0xf3;

/** Layout variants Traccar tells apart by (start, type, length) (`decodeVariant`). */
export type Variant =
  | 'STANDARD'
  | 'VXT01'
  | 'WANWAY_S20'
  | 'SR411_MINI'
  | 'GT06E_CARD'
  | 'BENWAY'
  | 'S5'
  | 'SPACE10X'
  | 'OBD6'
  | 'WETRUST'
  | 'JC400'
  | 'SL4X'
  | 'SEEWORLD'
  | 'RFID'
  | 'LW4G';

/** [type, test on the 0x7878 length byte, variant], first match wins (Traccar `decodeVariant`). */
export const BASIC_VARIANTS: ReadonlyArray<readonly [number, (length: number) => boolean, Variant]> = [
  [MSG_GPS_LBS_1, (l) => l === 0x24, 'VXT01'],
  [MSG_GPS_LBS_STATUS_1, (l) => l === 0x24, 'VXT01'],
  [MSG_LBS_MULTIPLE_3, (l) => l === 0x31, 'WANWAY_S20'],
  [MSG_LBS_MULTIPLE_3, (l) => l === 0x2e, 'SR411_MINI'],
  [MSG_GPS_LBS_1, (l) => l >= 0x71, 'GT06E_CARD'],
  [MSG_GPS_LBS_1, (l) => l === 0x21, 'BENWAY'],
  [MSG_GPS_LBS_1, (l) => l === 0x2b, 'S5'],
  [MSG_LBS_STATUS, (l) => l >= 0x17, 'SPACE10X'],
  [MSG_STATUS, (l) => l === 0x13, 'OBD6'],
  [MSG_GPS_LBS_1, (l) => l === 0x29, 'WETRUST'],
  [MSG_LBS_3, (l) => l === 0x37, 'SL4X'],
  [MSG_GPS_LBS_5, (l) => l === 0x2a, 'SL4X'],
  [MSG_GPS_LBS_STATUS_4, (l) => l === 0x27 || l === 0x29, 'SL4X'],
  [MSG_GPS_LBS_2, (l) => l === 0x2f, 'SEEWORLD'],
  [MSG_GPS_LBS_STATUS_1, (l) => l === 0x26, 'SEEWORLD'],
  [MSG_STATUS_3, (l) => l === 0x0c, 'SEEWORLD'],
  [MSG_GPS_LBS_RFID, (l) => l === 0x28, 'RFID'],
  [MSG_GPS_LBS_STATUS_5, (l) => l === 0x40, 'LW4G'],
];

/** VL103 0x36 GPS + LBS + RFID frames carry this 0x7878 length (captured VL103 frames). */
export const LOCATION_RFID_LENGTH = 0x35;

/** Models whose frames differ (Traccar `Gt06ProtocolDecoder`, `decoder.setModelOverride`). */
export const NT_MODELS: ReadonlySet<string> = new Set(['NT11', 'NT20', 'NT26', 'NT40', 'NT46', 'VL100', 'XT40']);
export const VL_MODELS: ReadonlySet<string> = new Set(['VL103', 'LL303', 'VL512', 'G18']);

export interface ModelFlags {
  /** upper-cased DecodeContext.model, when the device record names one */
  model?: string;
  lw: boolean;
  seeworld: boolean;
  nt: boolean;
  vl: boolean;
}

/**
 * The alarm byte of status blocks (Traccar `decodeAlarm`); 16-bit codes carry the language
 * byte's high nibble as bits 8-11. Unknown codes give undefined.
 */
export function decodeAlarm(value: number, m: ModelFlags): Alarm | undefined {
  switch (value) {
    case 0x01:
      return 'sos';
    case 0x02:
      return 'powerCut';
    case 0x03:
      return 'vibration';
    case 0x04:
      return 'geofenceEnter';
    case 0x05:
      return 'geofenceExit';
    case 0x06:
      return 'overspeed';
    case 0x09:
      return m.vl ? 'tow' : 'vibration';
    case 0x0e:
    case 0x0f:
      return 'lowBattery';
    case 0x11:
      return 'powerOff';
    case 0x0c:
    case 0x13:
    case 0x25:
    case 0x32:
      return 'tampering';
    case 0x14:
      return 'door';
    case 0x18:
      return m.lw ? 'accident' : 'removing';
    case 0x19:
      return m.lw ? 'hardAcceleration' : 'lowBattery';
    case 0x1a:
    case 0x27:
    case 0xf1:
      return 'hardBraking';
    case 0x1b:
    case 0x2a:
    case 0x2b:
    case 0x2e:
      return 'hardCornering';
    case 0x23:
      return 'fallDown';
    case 0x26:
    case 0xf0:
      return 'hardAcceleration';
    case 0x28:
      return m.seeworld ? 'hardCornering' : m.vl ? 'powerOff' : 'hardBraking';
    case 0x29:
      return m.seeworld ? 'accident' : 'hardAcceleration';
    case 0x2c:
    case 0xf2:
      return 'accident';
    case 0x30:
      return m.vl ? 'hardBraking' : 'jamming';
    case 0x33:
      return 'lock';
    case 0x34:
      return 'unlock';
    case 0x53:
      return 'fuelLeak';
    case 0x5b:
    case 0x5c:
      return 'temperature';
    case 0xc9:
      return 'idle';
    case 0x0107:
    case 0x010b:
      return 'jamming';
    default:
      return undefined;
  }
}

/** Bits 3-5 of the terminal information byte (Traccar `decodeStatus`). */
export function decodeStatusAlarm(code: number, variant: Variant): Alarm | undefined {
  switch (code) {
    case 1:
      return 'vibration';
    case 2:
      return 'powerCut';
    case 3:
      return 'lowBattery';
    case 4:
      return 'sos';
    case 6:
      return 'geofence';
    case 7:
      return variant === 'VXT01' ? 'overspeed' : 'removing';
    default:
      return undefined;
  }
}

/** 0x95 event byte, JC100/JC400 (Traccar `MSG_ALARM`); 0x01 is SOS only in the extended form. */
export const JC_ALARM_EVENTS: Readonly<Record<number, Alarm>> = {
  0x0e: 'lowPower',
  0x76: 'temperature',
  0x80: 'vibration',
  0x87: 'overspeed',
  0x88: 'powerCut',
  0x90: 'hardAcceleration',
  0x91: 'hardBraking',
  0x92: 'hardCornering',
  0x93: 'accident',
};

/** 0x70 module 0x34 event byte (Traccar `MSG_GPS_MODULAR`). */
export const MODULAR_EVENTS: Readonly<Record<number, Alarm>> = {
  0x10: 'door',
  0x12: 'removing',
  0x14: 'geofenceEnter',
  0x15: 'geofenceExit',
  0x16: 'temperature',
  0x1a: 'lowBattery',
  0x1b: 'overspeed',
  0x1c: 'powerOn',
  0x1d: 'powerOff',
  0x20: 'vibration',
  0x21: 'powerCut',
  0x23: 'tampering',
};

/** 0x7979 0x33 AZ735 status byte (Traccar `MSG_AZ735_ALARM`). */
export const AZ735_ALARMS: Readonly<Record<number, Alarm>> = {
  0xa2: 'lowBattery',
  0xa3: 'lowBattery',
  0xa4: 'general',
  0xa5: 'door',
};

/** Session keys this decoder writes and reads back on later frames (DecodeContext.session). */
export const SESSION_TZ = 'gt06.tzOffsetMin';
export const SESSION_PHOTOS = 'gt06.photos';
