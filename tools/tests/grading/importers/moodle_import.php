<?php
// Moodle's CSV grade import replayed on one file: the parsing, user matching and grade rules of
// moodle/moodle at 6374475dc3cf3a94e22ec18c4655b89819a1b5d6 ("weekly release 4.4dev", 2023-11-24),
// written anew here (not Moodle's code), each rule citing the lines it replays. Run by Debian's
// php-cli: php moodle_import.php FILE.csv SITE.json, SITE.json being what Moodle holds (its users,
// the mapping the instructor picks on the import form, the grade items, the grades already there).
// Prints JSON: the import's status and errors (Moodle's own strings, lang/en/grades.php and
// lang/en/error.php) and, when it commits, each user's grade and feedback afterwards.
//
// SITE.json: {"rule": "4.4" | "5.0dev", "unlimitedgrades": bool, "gradepointmax": number,
//   "users": [{"id": 1, "email": "...", "idnumber": "...", "username": "..."}],
//   "mapfrom": COLUMN, "mapto": "useremail" | "useridnumber" | "username" | "userid",
//   "mapping": {"COLUMN": "ITEMID" | "feedback_ITEMID" | "0"},
//   "items": {"ITEMID": {"grademax": 100, "grademin": 0}}, "grades": {"USERID": {"ITEMID": {"finalgrade": 5, "feedback": "..."}}}}
// Rule "5.0dev": the grade bound of Moodle 5.0's development code (Build 20241007), the grade item's
// own maximum and minimum (load_data.php insert_grade_record there) instead of 100.

function fail_import(array &$state, string $message): void {
    // load_data.php lines 360-364 (cleanup_import): the status becomes false, the import is void.
    $state['status'] = false;
    $state['errors'][] = $message;
}

// lib/csvlib.class.php lines 92-173 (csv_import_reader::load_csv_content), then lines 175-180 and
// 223-254: the rows are stored with fputcsv and read back with fgetcsv (init skips the header).
function load_csv(string $content, array &$state): ?array {
    if (strncmp($content, "\xEF\xBB\xBF", 3) === 0) {          // line 100: the byte-order mark goes
        $content = substr($content, 3);
    }
    $content = preg_replace('!\r\n?!', "\n", $content);        // line 102
    $content = trim($content);                                  // line 108
    $fp = fopen('php://temp', 'w+b');
    fwrite($fp, $content);
    fseek($fp, 0);
    $columns = [];
    while ($fgetdata = fgetcsv($fp, 0, ',', '"')) {            // line 129
        if (count($fgetdata) == 1) {                            // lines 131-135: an empty line is skipped
            if ($fgetdata[0] !== null) {
                $columns[] = $fgetdata;
            }
        } else {
            $columns[] = $fgetdata;
        }
    }
    if (!isset($columns[0])) {                                  // lines 143-147
        fail_import($state, 'csvemptyfile');
        return null;
    }
    $count = count($columns[0]);
    foreach ($columns as $row) {                                // lines 165-173
        if (count($row) !== $count) {
            fail_import($state, 'csvweirdcolumns: Incorrect number of columns detected');
            return null;
        }
    }
    $stored = fopen('php://temp', 'w+b');                       // line 179: csv_export_writer::print_array
    foreach ($columns as $row) {
        fputcsv($stored, $row, ',', '"');                       // line 452 (add_data)
    }
    fseek($stored, 0);
    $rows = [];
    while ($line = fgetcsv($stored)) {                          // lines 237 and 249
        $rows[] = $line;
    }
    return $rows;
}

// lib/moodlelib.php lines 8980-8995 (unformat_float, strict), with English's decimal separator '.'.
function unformat_float_strict($value) {
    $value = trim((string)$value);
    if ($value == '') {
        return null;
    }
    $value = str_replace(' ', '', $value);
    if (!is_numeric($value)) {
        return false;
    }
    return (float)$value;
}

// load_data.php lines 221-264 (check_user_exists): email and username compared without case, the
// others exactly; no user, or more than one, stops the import.
function check_user_exists(string $value, string $mapto, array $site, array &$state) {
    $fields = ['userid' => ['id', 'id'], 'useridnumber' => ['idnumber', 'idnumber'],
               'useremail' => ['email', 'email address'], 'username' => ['username', 'username']];
    [$field, $label] = $fields[$mapto];
    $found = [];
    foreach ($site['users'] as $user) {
        $have = (string)($user[$field] ?? '');
        // Lines 229-241: sql_equal(..., false) compares without case (the roster's addresses are ASCII).
        $same = in_array($field, ['email', 'username']) ? strtolower($have) === strtolower($value) : $have === $value;
        if ($same) {
            $found[] = $user;
        }
    }
    if ($field === 'id' && !is_numeric($value)) {
        $found = [];
    }
    if (count($found) != 1) {
        $key = count($found) ? 'usermappingerrormultipleusersfound' : 'usermappingerror';
        fail_import($state, "$key: Could not find exactly one user with $label of \"$value\"");
        return null;
    }
    return $found[0]['id'];
}

// load_data.php lines 161-174 (insert_grade_record); rule 5.0dev: the item's own bounds.
function insert_grade_record(array $record, $itemid, array $site, array &$state): bool {
    if (!array_key_exists('finalgrade', $record) || $record['finalgrade'] === null) {
        return true;
    }
    $grade = $record['finalgrade'];
    if (($site['rule'] ?? '4.4') === '5.0dev') {
        $item = $site['items'][(string)$itemid];
        if (($grade <= $item['grademax'] && $grade >= $item['grademin']) || !empty($site['unlimitedgrades'])) {
            return true;
        }
        fail_import($state, $grade > $item['grademax']
            ? "gradevaluetoobig: One of the grade values is larger than the allowed grade maximum of {$item['grademax']}"
            : "gradevaluetoosmall: One of the grade values is smaller than the allowed grade minimum of {$item['grademin']}");
        return false;
    }
    $maximum = 100;                                             // line 162
    if (!empty($site['unlimitedgrades'])) {                     // lines 164-166
        $maximum = $site['gradepointmax'];
    }
    if ($grade <= $maximum) {                                   // line 169
        return true;
    }
    fail_import($state, "gradevaluetoobig: One of the grade values is larger than the allowed grade maximum of $maximum");
    return false;
}

function replay(string $path, array $site): array {
    $state = ['status' => true, 'errors' => [], 'buffer' => []];
    $rows = load_csv(file_get_contents($path), $state);
    if ($rows === null) {
        return $state;
    }
    $header = array_map('trim', array_shift($rows));            // lines 130-136 (trim_headers)
    $map = [];
    foreach ($site['mapping'] as $column => $to) {              // lines 459-467
        $map[(int)$column] = (string)$to;
    }
    $map[(int)$site['mapfrom']] = $site['mapto'];               // line 470
    foreach ($rows as $number => $line) {                       // line 492
        if (count($line) <= 1) {                                // lines 493-496
            continue;
        }
        $studentid = null;
        $grades = [];
        $feedbacks = [];
        foreach ($line as $key => $value) {                     // lines 503-531
            $value = trim((string)$value);                      // lines 505-506
            $mapping = $map[$key] ?? '0';
            $base = explode('_', $mapping);                     // lines 517-524
            switch ($base[0]) {                                 // lines 401-428
                case 'userid': case 'useridnumber': case 'useremail': case 'username':
                    $studentid = check_user_exists($value, $base[0], $site, $state);
                    break;
                case 'feedback':                                // lines 411-418, 274-289
                    $feedbacks[] = ['itemid' => (int)$base[1], 'feedback' => $value];
                    break;
                case '0':
                    break;
                default:                                        // lines 419-424, 301-353 (update_grade_item)
                    if ($value === '' or $value == '-') {
                        $grade = null;                          // line 337: "No grade."
                    } else {
                        $grade = unformat_float_strict($value);
                        if ($grade === false) {
                            fail_import($state, 'badgrade: Supplied grade is invalid');
                        }
                    }
                    $grades[] = ['itemid' => (int)$mapping, 'finalgrade' => $grade];
            }
            if ($state['status'] === false) {                   // lines 528-530: the whole import stops
                return $state;
            }
        }
        if (empty($studentid) || !is_numeric($studentid)) {     // lines 534-538
            fail_import($state, 'usermappingerrorusernotfound: User mapping error. Could not find user.');
            return $state;
        }
        foreach ($grades as $grade) {                           // lines 547-584
            if (!insert_grade_record($grade, $grade['itemid'], $site, $state)) {
                return $state;
            }
            $state['buffer'][$studentid][$grade['itemid']] = ['finalgrade' => $grade['finalgrade']];
        }
        foreach ($feedbacks as $feedback) {                     // lines 587-606
            $entry = $state['buffer'][$studentid][$feedback['itemid']] ?? ['importonlyfeedback' => true];
            $entry['feedback'] = $feedback['feedback'];
            $state['buffer'][$studentid][$feedback['itemid']] = $entry;
        }
    }
    // grade/import/lib.php lines 96-136 (grade_import_commit) and lib/grade/grade_item.php lines
    // 1872-1889 (update_final_grade): a grade is set, NULL included (it clears the one there); a
    // feedback-only entry leaves the grade as it is.
    $final = $site['grades'] ?? [];
    foreach ($state['buffer'] as $userid => $items) {
        foreach ($items as $itemid => $entry) {
            $current = $final[(string)$userid][(string)$itemid] ?? ['finalgrade' => null, 'feedback' => null];
            if (empty($entry['importonlyfeedback'])) {
                $current['finalgrade'] = $entry['finalgrade'];
                $current['cleared'] = $entry['finalgrade'] === null;
            }
            if (array_key_exists('feedback', $entry)) {
                $current['feedback'] = $entry['feedback'];
            }
            $final[(string)$userid][(string)$itemid] = $current;
        }
    }
    $state['final'] = $final;
    unset($state['buffer']);
    return $state;
}

// lib/weblib.php lines 1149-1159 (validate_email): PHPMailer::validateAddress, whose default
// validator is PHP's own filter (lib/phpmailer/src/PHPMailer.php lines 581 and 1430-1432), and no
// '<' or '>'. Moodle keeps no user whose address it refuses: such a key can match no one.
// php moodle_import.php --emails ADDRESSES.json prints which of the addresses Moodle accepts.
if ($argc === 3 && $argv[1] === '--emails') {
    $accepted = [];
    foreach (json_decode(file_get_contents($argv[2]), true) as $address) {
        $accepted[$address] = filter_var($address, FILTER_VALIDATE_EMAIL) !== false && !preg_match('/[<>]/', $address);
    }
    echo json_encode($accepted, JSON_PRETTY_PRINT), "\n";
    exit(0);
}
if ($argc !== 3) {
    fwrite(STDERR, "usage: php moodle_import.php FILE.csv SITE.json | --emails ADDRESSES.json\n");
    exit(2);
}
echo json_encode(replay($argv[1], json_decode(file_get_contents($argv[2]), true)), JSON_PRETTY_PRINT), "\n";
