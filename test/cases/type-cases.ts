// The type-selection case table (NGSI-LD §4.17) over the q fixtures: `,` and `|` OR, `;` AND
// (binding tighter), parentheses. Run in memory and through SQL.

export interface TypeCase {
  type: string;
  /** Fixture numbers (1..12) selected, in creation order. */
  expect: number[];
}

// Types: Room 1, 2, 3, 4, 12; Building 3, 5; Sensor 6, 7, 8, 11; Device 9, 10, 11.
export const TYPE_CASES: TypeCase[] = [
  { type: 'Room', expect: [1, 2, 3, 4, 12] },
  { type: 'Building', expect: [3, 5] },
  { type: 'Room,Building', expect: [1, 2, 3, 4, 5, 12] },
  { type: 'Room|Building', expect: [1, 2, 3, 4, 5, 12] },
  { type: 'Room;Building', expect: [3] },
  { type: 'Device;Sensor', expect: [11] },
  { type: 'Sensor', expect: [6, 7, 8, 11] },
  { type: 'Unknown', expect: [] },
  { type: 'Room,Unknown', expect: [1, 2, 3, 4, 12] },
  { type: 'Room;Unknown', expect: [] },
  { type: '(Room|Sensor);Building', expect: [3] },
  { type: 'Room|Sensor;Device', expect: [1, 2, 3, 4, 11, 12] },
  { type: '(Room|Sensor);(Building|Device)', expect: [3, 11] },
  { type: 'Device,Sensor;Building', expect: [9, 10, 11] },
  { type: '((Device))', expect: [9, 10, 11] },
  { type: 'https://example.org/ns#Building', expect: [3, 5] },
  { type: 'Building;Room;Sensor', expect: [] },
  { type: 'Sensor|Device', expect: [6, 7, 8, 9, 10, 11] },
  { type: 'Unknown|(Room;Building)', expect: [3] },
];
