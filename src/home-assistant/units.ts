// UN/CEFACT unit codes (the unitCode of NGSI-LD properties) as Home Assistant units of measurement,
// with the sensor device class each one makes clear. A data table: codes without a row get neither.

/** What Home Assistant is told of a unit: its unit_of_measurement and, where the unit alone says it, the device_class. */
export interface HomeAssistantUnit {
  readonly unit: string;
  readonly deviceClass?: string;
  /** The sensor's state_class when not `measurement` (energy is a total). */
  readonly stateClass?: string;
}

// Codes from UN/CEFACT Recommendation 20; units and device classes as Home Assistant's sensor
// documentation lists them (homeassistant/components/sensor/const.py, DEVICE_CLASS_UNITS).
const UNITS: Readonly<Record<string, HomeAssistantUnit>> = {
  CEL: { unit: '°C', deviceClass: 'temperature' },
  FAH: { unit: '°F', deviceClass: 'temperature' },
  KEL: { unit: 'K', deviceClass: 'temperature' },
  P1: { unit: '%' },
  WTT: { unit: 'W', deviceClass: 'power' },
  KWT: { unit: 'kW', deviceClass: 'power' },
  WHR: { unit: 'Wh', deviceClass: 'energy', stateClass: 'total' },
  KWH: { unit: 'kWh', deviceClass: 'energy', stateClass: 'total' },
  VLT: { unit: 'V', deviceClass: 'voltage' },
  AMP: { unit: 'A', deviceClass: 'current' },
  PAL: { unit: 'Pa', deviceClass: 'pressure' },
  A97: { unit: 'hPa', deviceClass: 'pressure' },
  BAR: { unit: 'bar', deviceClass: 'pressure' },
  LUX: { unit: 'lx', deviceClass: 'illuminance' },
  HTZ: { unit: 'Hz', deviceClass: 'frequency' },
  MTR: { unit: 'm', deviceClass: 'distance' },
  CMT: { unit: 'cm', deviceClass: 'distance' },
  MMT: { unit: 'mm', deviceClass: 'distance' },
  KMT: { unit: 'km', deviceClass: 'distance' },
  MTS: { unit: 'm/s', deviceClass: 'speed' },
  KMH: { unit: 'km/h', deviceClass: 'speed' },
  KGM: { unit: 'kg', deviceClass: 'weight' },
  GRM: { unit: 'g', deviceClass: 'weight' },
  LTR: { unit: 'L', deviceClass: 'volume' },
  MTQ: { unit: 'm³', deviceClass: 'volume' },
  SEC: { unit: 's', deviceClass: 'duration' },
  MIN: { unit: 'min', deviceClass: 'duration' },
  HUR: { unit: 'h', deviceClass: 'duration' },
  '59': { unit: 'ppm' },
  '2N': { unit: 'dB' },
};

/** Names that make a percentage a relative humidity or a battery level. */
const PERCENT_CLASSES: ReadonlyArray<[RegExp, string]> = [[/humid/i, 'humidity'], [/battery/i, 'battery']];

/** The Home Assistant unit of a unit code, or undefined when it has none; `name` tells what a percentage measures. */
export function unitOf(unitCode: string | undefined, name: string): HomeAssistantUnit | undefined {
  if (unitCode === undefined || !Object.hasOwn(UNITS, unitCode)) return undefined;
  const unit = UNITS[unitCode];
  if (unit === undefined || unit.unit !== '%') return unit;
  const found = PERCENT_CLASSES.find(([re]) => re.test(name));
  return found ? { unit: unit.unit, deviceClass: found[1] } : unit;
}
